"""References for the GenAI-style decoders of tools/llm_model.py: onnxruntime's CPU EP running the
same prefill + decode loop as the page (static/demos/text-generation/), and a float64 NumPy forward pass.

``OrtDecoder(folder, max_length).generate(prompt_ids, new_tokens)`` is what the browser's
generation must equal token for token (greedy); ``numpy_logits(config, weights, ids)`` is the
float64 forward pass of the dequantized weights (every position's logits), for forced-decoding
agreement.

Usage (prints the greedy continuation of a few token ids)::

    python -m tools.llm_reference MODEL_FOLDER [--ids 1,2,3] [--new 16] [--max-length 64]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.llm_model import Config, rotary_caches  # noqa: E402


class OrtDecoder:
    """onnxruntime (CPU EP) prefill + decode over a fixed-size KV cache, as the page runs it:
    prefill with the prompt padded to ``max_length`` rows, then one row per step."""

    def __init__(self, folder: Path, max_length: int):
        import onnxruntime

        meta = json.loads((Path(folder) / "genai_config.json").read_text(encoding="utf-8"))
        if max_length not in meta["max_lengths"]:
            raise ValueError(f"{folder} has model files for the maximum contexts {meta['max_lengths']}, not {max_length}")
        self.kv, self.max_length = meta["kv"], max_length
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(Path(folder) / f"model-{max_length}.onnx"), options,
                                                    providers=["CPUExecutionProvider"])

    def _run(self, ids: list[int], seqlens_k: int, logits_index: int, past: dict) -> tuple[np.ndarray, dict]:
        feeds = {"input_ids": np.array([ids], np.int64), "seqlens_k": np.array([seqlens_k], np.int32),
                 "logits_index": np.array([logits_index], np.int64), **past}
        names = [o.name for o in self.session.get_outputs()]
        out = dict(zip(names, self.session.run(names, feeds)))
        present = {n.replace("present.", "past_key_values."): v for n, v in out.items() if n.startswith("present.")}
        return out["logits"].reshape(-1), present

    def empty_past(self) -> dict:
        shape = (1, self.kv["kv_heads"], self.max_length, self.kv["head_dim"])
        dtype = np.float16 if self.kv.get("dataType") == "float16" else np.float32
        return {f"past_key_values.{i}.{kind}": np.zeros(shape, dtype)
                for i in range(self.kv["layers"]) for kind in ("key", "value")}

    def prefill(self, prompt: list[int]) -> tuple[np.ndarray, dict]:
        """Logits of the last prompt token and the cache after the prompt."""
        max_length = self.max_length
        if not 0 < len(prompt) < max_length:
            raise ValueError(f"the prompt takes 1 .. {max_length - 1} tokens; got {len(prompt)}")
        padded = prompt + [0] * (max_length - len(prompt))
        return self._run(padded, max_length - 1, len(prompt) - 1, self.empty_past())

    def step(self, token: int, position: int, past: dict) -> tuple[np.ndarray, dict]:
        """Logits after ``token`` placed at ``position`` (the cache holds ``position`` tokens)."""
        return self._run([token], position, 0, past)

    def generate(self, prompt: list[int], new_tokens: int, stop: set[int] = frozenset()) -> list[int]:
        """Greedy continuation: up to ``new_tokens`` ids (ending early after a ``stop`` id)."""
        max_length = self.max_length
        logits, past = self.prefill(prompt)
        out = []
        position = len(prompt)
        while len(out) < new_tokens and position < max_length:
            token = int(np.argmax(logits))
            out.append(token)
            if token in stop or len(out) == new_tokens or position + 1 >= max_length:
                break
            logits, past = self.step(token, position, past)
            position += 1
        return out


def _rms(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, -1, keepdims=True) + eps) * w


def _rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x [heads, T, head_dim], halves rotated (rotary_interleaved=0)."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)


def numpy_logits(config: Config, weights: dict, ids: list[int]) -> np.ndarray:
    """float64 forward pass of the dequantized weights: logits [len(ids), vocab] (causal)."""
    t = len(ids)
    hd, h, kvh = config.head_dim, config.heads, config.kv_heads
    embed = weights["embed"].dequantize()
    x = embed[np.array(ids)]
    cos, sin = (c.astype(np.float64)[:t] for c in rotary_caches(config))
    mask = np.triu(np.full((t, t), -np.inf), 1)
    for layer in weights["layers"]:
        w = {n: layer[n].dequantize() for n in ("q", "k", "v", "o", "gate", "up", "down")}
        n = _rms(x, layer["attn_norm"].astype(np.float64), config.eps)
        q = (n @ w["q"].T).reshape(t, h, hd).transpose(1, 0, 2)
        k = (n @ w["k"].T).reshape(t, kvh, hd).transpose(1, 0, 2)
        v = (n @ w["v"].T).reshape(t, kvh, hd).transpose(1, 0, 2)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        k, v = np.repeat(k, h // kvh, 0), np.repeat(v, h // kvh, 0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd) + mask
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        a = (p @ v).transpose(1, 0, 2).reshape(t, h * hd)
        x = x + a @ w["o"].T
        n = _rms(x, layer["ffn_norm"].astype(np.float64), config.eps)
        g = n @ w["gate"].T
        x = x + ((g / (1 + np.exp(-g))) * (n @ w["up"].T)) @ w["down"].T
    return _rms(x, weights["norm"].astype(np.float64), config.eps) @ embed.T


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.llm_reference", description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--ids", default="1,2,3")
    parser.add_argument("--new", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=64)
    args = parser.parse_args(argv)
    ids = [int(i) for i in args.ids.split(",")]
    print(OrtDecoder(args.folder, args.max_length).generate(ids, args.new))
    return 0


if __name__ == "__main__":
    sys.exit(main())
