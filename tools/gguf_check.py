"""Checks of a converted GGUF decoder (``python -m tools.gguf_convert --check``): the tokenizer on a
chat-formatted prompt, a greedy continuation by onnxruntime (tools.llm_reference.OrtDecoder),
its top-1 against the float64 NumPy forward pass of the GGUF-dequantized weights, and the error
of the 4-bit blocks against the GGUF's values.

Usage (the folder tools.gguf_convert wrote; ``make llm-check``)::

    python -m tools.gguf_check [--folder DIR] [--cache DIR] [--bits 4|8] [--max-length 256]
                               [--prompt TEXT] [--new N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from tools.gguf_convert import (DEFAULT_CACHE, DEFAULT_OUT, GGUF_NAME, LINEAR_NAMES, convert_weights, dequantized,
                                gguf_float_weights, read_config)
from tools.llm_model import quantize
from tools.llm_reference import OrtDecoder, numpy_logits

PROMPT = "What is the capital of France?"


class _Float:
    """A float64 matrix with QuantLinear's dequantize() (numpy_logits takes either)."""

    def __init__(self, w: np.ndarray):
        self.w = w

    def dequantize(self) -> np.ndarray:
        return self.w


def chat_prompt(folder: Path, text: str) -> str:
    import jinja2

    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    template = jinja2.Environment().from_string(config["chat_template"])
    return template.render(messages=[{"role": "user", "content": text}], add_generation_prompt=True)


def gguf_float_model(reader, config) -> dict:
    """The weights dict with every product as the GGUF's own float64 values."""
    tensors = {t.name: t for t in reader.tensors}
    vec = lambda n: dequantized(tensors[n]).reshape(-1).astype(np.float32)  # noqa: E731
    weights = {"embed": _Float(dequantized(tensors["token_embd.weight"])), "norm": vec("output_norm.weight"),
               "layers": []}
    for i in range(config.layers):
        layer = {name: _Float(gguf_float_weights(reader, config, i, name)) for name in LINEAR_NAMES}
        layer["attn_norm"], layer["ffn_norm"] = vec(f"blk.{i}.attn_norm.weight"), vec(f"blk.{i}.ffn_norm.weight")
        weights["layers"].append(layer)
    return weights


def check(folder: Path, gguf_path: Path, max_length: int, prompt: str = PROMPT, new_tokens: int = 24,
          bits: int = 4) -> dict:
    from gguf import GGUFReader
    from tokenizers import Tokenizer

    reader = GGUFReader(str(gguf_path))
    config = read_config(reader, max_position=max_length, bits=bits)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    text = chat_prompt(folder, prompt)
    ids = tokenizer.encode(text).ids
    eos = tokenizer.token_to_id("<|im_end|>")
    print(f"prompt ({len(ids)} tokens): {text!r}\nids: {ids}")

    started = time.perf_counter()
    decoder = OrtDecoder(folder, max_length)
    loaded = time.perf_counter()
    out = decoder.generate(ids, new_tokens, stop={eos})
    done = time.perf_counter()
    answer = tokenizer.decode(out, skip_special_tokens=False)
    print(f"onnxruntime CPU (max_length {max_length}): session {loaded - started:.1f} s, "
          f"{len(out)} tokens in {done - loaded:.1f} s\ngenerated ids: {out}\ngenerated: {answer!r}")

    # top-1 of the float64 forward pass of the GGUF's own values, forced along ORT's tokens
    logits = numpy_logits(config, gguf_float_model(reader, config), ids + out[:-1])
    reference = [int(t) for t in logits[len(ids) - 1:].argmax(-1)]
    agree = sum(a == b for a, b in zip(reference, out))
    print(f"top-1 agreement with float64 NumPy (GGUF values): {agree}/{len(out)}")
    for step, (a, b) in enumerate(zip(reference, out)):
        if a != b:
            row = logits[len(ids) - 1 + step]
            print(f"  step {step}: NumPy {a} {tokenizer.id_to_token(a)!r} ({row[a]:.3f}), onnxruntime {b} "
                  f"{tokenizer.id_to_token(b)!r} ({row[b]:.3f} in NumPy's logits)")

    # the same forward pass over the ONNX model's own (4-bit) values: isolates the graph from the requantization
    converted = convert_weights(reader, config)
    own = [int(t) for t in numpy_logits(config, converted, ids + out[:-1])[len(ids) - 1:].argmax(-1)]
    own_agree = sum(a == b for a, b in zip(own, out))
    print(f"top-1 agreement with float64 NumPy (the ONNX model's {bits}-bit values): {own_agree}/{len(out)}")

    # the 4-bit blocks against the GGUF's values: the converter's fit vs plain min/max requantization
    ours = converted["layers"][0]
    errors = {}
    for name in ("q", "gate", "down"):
        w = gguf_float_weights(reader, config, 0, name)
        fit = np.sqrt(np.mean((ours[name].dequantize() - w) ** 2))
        minmax = np.sqrt(np.mean((quantize(w, bits, 32).dequantize() - w) ** 2))
        errors[name] = (fit / np.sqrt(np.mean(w * w)), minmax / np.sqrt(np.mean(w * w)))
        print(f"layer 0 {name}: relative RMS error vs GGUF: converter {errors[name][0]:.4f}, "
              f"min/max requantized {errors[name][1]:.4f}")
    return {"ids": ids, "generated": out, "text": answer, "agree": agree, "own_agree": own_agree, "errors": errors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gguf_check", description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--bits", type=int, choices=(4, 8), default=4, help="the bits the folder was converted with")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--prompt", default=PROMPT)
    parser.add_argument("--new", type=int, default=24)
    args = parser.parse_args(argv)
    check(args.folder, args.cache / GGUF_NAME, args.max_length, args.prompt, args.new, args.bits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
