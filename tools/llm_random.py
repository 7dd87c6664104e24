"""Random-weight GenAI-style decoders of a real model's shape, for benchmarks (``tools/bench_llm.py``).

The weights are drawn directly as quantized codes, never as float matrices, so a model of
Qwen2.5-0.5B's size (24 layers, hidden 896, 14 query / 2 KV heads, FF 4864, vocab 151936, tied
embeddings) is written in well under a minute with numpy + onnx alone (the GPU host has no package
registry). The graph is ``tools/llm_model.py``'s: MatMulNBits blocks of 32 with 4-bit codes
uniform in 0..15 around the zero point 8 (8-bit on request), an 8-bit symmetric embedding shared by
the lm_head. Scales make every product's output O(1) per unit of input (the same relative scales as
``llm_model.random_weights``), so activations and logits stay finite through all the layers.
Qwen2.5's q/k/v biases are left out: they are not in this graph layout and cost no weight bytes
worth counting.

Usage::

    python -m tools.llm_random --shape qwen2.5-0.5b --out server/models/generated/qwen-shape-int4
        [--bits 4] [--max-length 256,1024] [--seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.llm_model import Config, QuantLinear, build_model, linear_shape, save  # noqa: E402

#: shapes by name (Qwen2.5-0.5B: its config.json's sizes, rope theta 1e6, RMS epsilon 1e-6)
SHAPES = {
    "qwen2.5-0.5b": Config(vocab=151936, hidden=896, layers=24, heads=14, kv_heads=2, ff=4864,
                           rope_theta=1_000_000.0, eps=1e-6, max_position=1024),
}
#: standard deviation of a uniform code in 0 .. 2^bits - 1 around the middle
_CODE_STD = {4: np.sqrt((16 ** 2 - 1) / 12), 8: np.sqrt((256 ** 2 - 1) / 12)}


def random_linear(rng: np.random.Generator, n: int, k: int, std: float, bits: int, block: int) -> QuantLinear:
    """W [N, K] with standard deviation ``std``: codes uniform in 0 .. 2^bits - 1, zero point
    2^(bits-1), per-block scales within ±20 % of std / (codes' standard deviation)."""
    nb = -(-k // block)
    codes = rng.integers(0, 1 << bits, (n, k), dtype=np.uint8)
    scales = (std / _CODE_STD[bits] * rng.uniform(0.8, 1.2, (n, nb))).astype(np.float32)
    zero_points = np.full((n, nb), 1 << (bits - 1), np.uint8)
    return QuantLinear(codes, scales, zero_points, bits, block)


def random_weights(config: Config, seed: int = 0) -> dict:
    """``llm_model.random_weights``' layout (embed, layers[i][name], norms) drawn as codes."""
    rng = np.random.default_rng(seed)
    weights = {"embed": random_linear(rng, config.vocab, config.hidden, 1.0, 8, 32), "layers": [],
               "norm": rng.uniform(-1.5, 1.5, config.hidden).astype(np.float32)}
    for _ in range(config.layers):
        layer = {}
        for name in ("q", "k", "v", "o", "gate", "up", "down"):
            n, k = linear_shape(config, name)
            std = (2.0 if name in ("q", "k") else 4.0 if name in ("o", "down") else 1.0) / np.sqrt(k)
            layer[name] = random_linear(rng, n, k, std, config.bits, config.block)
        layer["attn_norm"] = rng.uniform(0.8, 1.2, config.hidden).astype(np.float32)
        layer["ffn_norm"] = rng.uniform(0.8, 1.2, config.hidden).astype(np.float32)
        weights["layers"].append(layer)
    return weights


def write(folder: Path, shape: str = "qwen2.5-0.5b", bits: int = 4, max_lengths=(256, 1024), seed: int = 0,
          prefill_lengths=(32, 64, 128), **overrides) -> Config:
    """Write the random decoder of ``shape`` (with ``overrides``) into ``folder`` (``llm_model.save``:
    ``model-<L>.onnx`` per maximum context and per prefill length, as ``make llm`` writes SmolLM2's,
    ``model.onnx.data``, ``genai_config.json``)."""
    config = dataclasses.replace(SHAPES[shape], bits=bits, max_position=max(max(max_lengths), 256), **overrides)
    save(build_model(config, random_weights(config, seed)), Path(folder), config, tuple(max_lengths),
         {"name": f"random-{shape}-int{bits}", "seed": seed}, tuple(prefill_lengths))
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.llm_random", description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen2.5-0.5b")
    parser.add_argument("--out", type=Path, required=True, help="the model folder to write")
    parser.add_argument("--bits", type=int, choices=(4, 8), default=4, help="MatMulNBits bits of the layers")
    parser.add_argument("--max-length", default="256,1024", help="maximum contexts, one graph file each")
    parser.add_argument("--prefill-lengths", default="32,64,128",
                        help="shorter graphs a prompt prefills through (empty: none)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    write(args.out, args.shape, args.bits, sorted({int(v) for v in args.max_length.split(",")}), args.seed,
          sorted({int(v) for v in args.prefill_lengths.split(",") if v}))
    size = (args.out / "model.onnx.data").stat().st_size
    print(f"{args.out}: random {args.shape} int{args.bits}, model.onnx.data {size:,} bytes "
          f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
