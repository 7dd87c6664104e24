"""GenAI-style ONNX decoders (Llama family) built with numpy + onnx: the model the text-generation
page runs, for the tiny random-weight decoder of the tests and for the GGUF converter alike.

The graph follows ONNX Runtime GenAI's decoder layout so that ORT's WebNN EP maps it:

* ``input_ids`` int64 [1, sequence_length]; ``seqlens_k`` int32 [1] (tokens in the cache after
  this step, less one); ``logits_index`` int64 [1] (the row of this step whose logits are wanted:
  the last prompt token in prefill, 0 in decode); ``past_key_values.{i}.key|value`` float32
  [1, kv_heads, max_length, head_dim] (a fixed-size cache);
* outputs ``logits`` float32 [1, 1, vocab] and ``present.{i}.key|value`` (the same shape as past);
* ``Config.dtype`` "float16" makes every float tensor above and every float weight (scales, norms,
  the rotary caches) float16, as the builder's q4f16 files have them;
* the embedding: GatherBlockQuantized (8-bit, block 32) or Gather (float32);
* per layer: (Skip)SimplifiedLayerNormalization, three MatMulNBits (q, k, v), GroupQueryAttention
  with rotary (``do_rotary=1``, cos/sin caches, halves rotated: ``rotary_interleaved=0``), the
  output MatMulNBits, SkipSimplifiedLayerNormalization, the SwiGLU MLP (gate, up: MatMulNBits;
  Sigmoid, Mul, Mul; down: MatMulNBits);
* the final norm and the tied lm_head (MatMulNBits over the embedding's codes);
* products with block offsets (GGUF's Q4_1: W = d * q + m per block, ``QuantLinear.offsets``):
  MatMulNBits gives scale * (q - zp), and the offsets add the product of the input's block sums
  with O [blocks, N]: Reshape [1, -1, blocks, block] -> ReduceSum (last axis) -> MatMul -> Add
  (one ReduceSum per input, shared by q/k/v and by gate/up). ORT's WebNN EP takes MatMulNBits zero
  points only as integers, so the offsets cannot ride in them; the polyfill folds the added product
  back into the packed one (compile/block_offsets.js).

ORT's WebNN EP takes GroupQueryAttention only when ``total_sequence_length`` is a constant
initializer equal to the past buffer's length (decode) and to the sequence length (prefill). So
it is a literal, the maximum context: ``save()`` writes one small graph file per maximum context,
``model-<max_length>.onnx``, all of them reading one weights file ``model.onnx.data``; the page
picks one when it loads. (A total_sequence_length computed from the past buffer's shape, which
ORT could fold under static shapes, makes ORT-web 1.30's session creation fail: "ParseData type
mismatch ... Expected:int32 Actual:int64".) Prefill runs with ``sequence_length = max_length``
(the prompt padded; causal attention keeps the padding unseen), decode with ``sequence_length = 1``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

MS = "com.microsoft"
TSL = "total_sequence_length"
DEFAULT_MAX_LENGTH = 256
#: the onnx opset and IR version ORT-web 1.30 reads
OPSET, IR_VERSION = 17, 8


@dataclasses.dataclass(frozen=True)
class Config:
    """The shape of a Llama-family decoder."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ff: int
    rope_theta: float = 10000.0
    eps: float = 1e-5
    max_position: int = 2048
    bits: int = 4            # MatMulNBits bits of the layers' products (4 or 8)
    block: int = 32          # MatMulNBits block size along K
    zero_points: bool = True
    embedding: str = "gbq8"  # "gbq8": GatherBlockQuantized 8-bit (lm_head shares the codes); "float"
    offsets: bool = False    # the layers' products have block offsets (W = scale * (q - zp) + offset)
    dtype: str = "float32"   # the float type of activations, scales, norms, caches and logits ("float16": q4f16)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def float_type(self) -> type:
        """The NumPy type of the model's float tensors."""
        return {"float32": np.float32, "float16": np.float16}[self.dtype]

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


# ---- MatMulNBits blocks ---------------------------------------------------------------------

def pack_nbits(codes: np.ndarray, bits: int, block: int) -> np.ndarray:
    """codes uint8 [N, K] (0 .. 2^bits - 1) -> MatMulNBits B uint8 [N, n_blocks, block*bits/8]
    (K padded with zeros to whole blocks; 4 bits: element 2j in the low nibble)."""
    n, k = codes.shape
    nb = -(-k // block)
    padded = np.zeros((n, nb * block), np.uint8)
    padded[:, :k] = codes
    if bits == 8:
        return padded.reshape(n, nb, block)
    pairs = padded.reshape(n, nb, block // 2, 2)
    return (pairs[..., 0] | (pairs[..., 1] << 4)).astype(np.uint8)


def pack_zero_points(zp: np.ndarray, bits: int) -> np.ndarray:
    """zero points uint8 [N, n_blocks] -> MatMulNBits layout (4 bits: [N * ceil(nb/2)] nibbles)."""
    n, nb = zp.shape
    if bits == 8:
        return zp.reshape(-1).astype(np.uint8)
    padded = np.zeros((n, 2 * -(-nb // 2)), np.uint8)
    padded[:, :nb] = zp
    return (padded[:, 0::2] | (padded[:, 1::2] << 4)).reshape(-1).astype(np.uint8)


@dataclasses.dataclass
class QuantLinear:
    """y = x @ W.T with W [N, K] = scales * (codes - zero_points) (+ offsets), blockwise along K."""

    codes: np.ndarray         # uint8 [N, K]
    scales: np.ndarray        # float32 [N, n_blocks]
    zero_points: np.ndarray   # uint8 [N, n_blocks]
    bits: int
    block: int
    offsets: np.ndarray | None = None  # float32 [N, n_blocks], added to each block's values

    def dequantize(self) -> np.ndarray:
        """W float64 [N, K]."""
        n, k = self.codes.shape
        rep = lambda a: np.repeat(a.astype(np.float64), self.block, axis=1)[:, :k]  # noqa: E731
        w = (self.codes.astype(np.float64) - rep(self.zero_points)) * rep(self.scales)
        return w if self.offsets is None else w + rep(self.offsets)


def quantize(w: np.ndarray, bits: int, block: int, zero_points: bool = True) -> QuantLinear:
    """Asymmetric (min/max, zero point per block) or symmetric (zero point 2^(bits-1)) blockwise
    quantization of W [N, K] along K."""
    n, k = w.shape
    nb = -(-k // block)
    top = (1 << bits) - 1
    padded = np.zeros((n, nb * block), np.float64)
    padded[:, :k] = w
    blocks = padded.reshape(n, nb, block)
    valid = (np.arange(nb * block) < k).reshape(nb, block)
    lo = np.where(valid, blocks, np.inf).min(-1)
    hi = np.where(valid, blocks, -np.inf).max(-1)
    if zero_points:
        lo, hi = np.minimum(lo, 0), np.maximum(hi, 0)
        scale = (hi - lo) / top
        scale = np.where(scale == 0, 1.0, scale)
        zp = np.clip(np.round(-lo / scale), 0, top)
    else:
        zp = np.full((n, nb), 1 << (bits - 1), np.float64)
        scale = np.maximum(np.abs(lo), np.abs(hi)) / (1 << (bits - 1))
        scale = np.where(scale == 0, 1.0, scale)
    scale = scale.astype(np.float32)
    codes = np.clip(np.round(blocks / scale[..., None].astype(np.float64) + zp[..., None]), 0, top)
    return QuantLinear(codes.reshape(n, -1)[:, :k].astype(np.uint8), scale, zp.astype(np.uint8), bits, block)


# ---- weights --------------------------------------------------------------------------------

LINEARS = ("q", "k", "v", "o", "gate", "up", "down")


def linear_shape(config: Config, name: str) -> tuple[int, int]:
    """[N, K] of a layer's product."""
    kv = config.kv_heads * config.head_dim
    return {"q": (config.hidden, config.hidden), "k": (kv, config.hidden), "v": (kv, config.hidden),
            "o": (config.hidden, config.hidden), "gate": (config.ff, config.hidden),
            "up": (config.ff, config.hidden), "down": (config.hidden, config.ff)}[name]


def random_weights(config: Config, seed: int = 0) -> dict:
    """Quantized random weights: ``embed`` QuantLinear [vocab, hidden] (8-bit symmetric), per layer
    ``layers[i][name]`` QuantLinear, ``attn_norm``/``ffn_norm`` and ``norm`` float32 vectors.
    Scaled so that activations stay O(1) through the layers and logits differ by O(1)."""
    rng = np.random.default_rng(seed)
    embed = rng.normal(0, 1.0, (config.vocab, config.hidden))
    weights = {"embed": quantize(embed, 8, 32, zero_points=False), "layers": [],
               "norm": rng.uniform(-1.5, 1.5, config.hidden).astype(np.float32)}
    for _ in range(config.layers):
        layer = {}
        for name in LINEARS:
            n, k = linear_shape(config, name)
            std = (2.0 if name in ("q", "k") else 4.0 if name in ("o", "down") else 1.0) / np.sqrt(k)
            layer[name] = quantize(rng.normal(0, std, (n, k)), config.bits, config.block, config.zero_points)
            if config.offsets:  # a block's offset moves its values off zero, as Q4_1's minimum does
                q = layer[name]
                q.offsets = (rng.normal(0, std / 2, q.scales.shape)).astype(np.float32)
        layer["attn_norm"] = rng.uniform(0.8, 1.2, config.hidden).astype(np.float32)
        layer["ffn_norm"] = rng.uniform(0.8, 1.2, config.hidden).astype(np.float32)
        weights["layers"].append(layer)
    return weights


def rotary_caches(config: Config) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin float32 [max_position, head_dim / 2] (Llama's default RoPE)."""
    inv = 1.0 / (config.rope_theta ** (np.arange(0, config.head_dim, 2, dtype=np.float64) / config.head_dim))
    angles = np.arange(config.max_position, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


# ---- the graph ------------------------------------------------------------------------------

def build_model(config: Config, weights: dict):
    """The decoder as an onnx ModelProto (initializers in memory; see save())."""
    from onnx import TensorProto, helper, numpy_helper

    inits, nodes = [], []
    fl = config.float_type
    elem = TensorProto.FLOAT16 if fl is np.float16 else TensorProto.FLOAT

    def init(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, inputs, outputs, domain="", **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=f"/{outputs[0]}", domain=domain, **attrs))
        return outputs[0]

    block_sums = {}  # input name -> its ReduceSum's output (one per input and block size)

    def matmul_nbits(x, q: QuantLinear, prefix):
        n, k = q.codes.shape
        inputs = [x, init(prefix + ".qweight", pack_nbits(q.codes, q.bits, q.block)),
                  init(prefix + ".scales", q.scales.reshape(-1).astype(fl))]
        # MatMulNBits' default zero point is 2^(bits-1): the input is left out only where all are that
        if config.zero_points or q.bits == 8 or (q.zero_points != 1 << (q.bits - 1)).any():
            inputs.append(init(prefix + ".qzeros", pack_zero_points(q.zero_points, q.bits)))
        out = node("MatMulNBits", inputs, [prefix + (".nbits" if q.offsets is not None else ".out")], MS,
                   K=k, N=n, bits=q.bits, block_size=q.block, accuracy_level=0)
        if q.offsets is None:
            return out
        if k % q.block:
            raise ValueError(f"{prefix}: block offsets need K ({k}) a multiple of the block ({q.block})")
        key = (x, q.block)
        if key not in block_sums:
            split = node("Reshape", [x, init(f"{x}.blocks_shape", np.array([1, -1, k // q.block, q.block], np.int64))],
                         [f"{x}.blocks"])
            block_sums[key] = node("ReduceSum", [split, init(f"{x}.blocks_axis", np.array([-1], np.int64))],
                                   [f"{x}.block_sums"], keepdims=0)
        shift = node("MatMul", [block_sums[key], init(prefix + ".offsets", np.ascontiguousarray(q.offsets.T.astype(fl)))],
                     [prefix + ".offset"])
        return node("Add", [out, shift], [prefix + ".out"])

    hd, kvh = config.head_dim, config.kv_heads
    embed: QuantLinear = weights["embed"]
    if config.embedding == "gbq8":
        x = node("GatherBlockQuantized", [init("embed.qweight", embed.codes), "input_ids",
                                          init("embed.scales", embed.scales.astype(fl)),
                                          init("embed.qzeros", embed.zero_points)],
                 ["embeds"], MS, bits=8, block_size=embed.block, gather_axis=0, quantize_axis=1)
    else:
        x = node("Gather", [init("embed.weight", embed.dequantize().astype(fl)), "input_ids"], ["embeds"])
    cos, sin = rotary_caches(config)
    init("cos_cache", cos.astype(fl))
    init("sin_cache", sin.astype(fl))
    # a literal: ORT's WebNN EP takes GroupQueryAttention only with a constant
    # total_sequence_length (save() writes one model file per maximum context)
    init(TSL, np.array(DEFAULT_MAX_LENGTH, np.int32))
    residual = None
    for i, layer in enumerate(weights["layers"]):
        p = f"layers.{i}"
        if residual is None:
            normed = node("SimplifiedLayerNormalization", [x, init(p + ".attn_norm", layer["attn_norm"].astype(fl))],
                          [p + ".attn_norm.out"], axis=-1, epsilon=config.eps)
            residual = x
        else:
            outs = [p + ".attn_norm.out", "", "", p + ".attn_norm.residual"]
            node("SkipSimplifiedLayerNormalization", [x, residual, init(p + ".attn_norm", layer["attn_norm"].astype(fl))],
                 outs, MS, epsilon=config.eps)
            normed, residual = outs[0], outs[3]
        q, k, v = (matmul_nbits(normed, layer[n], f"{p}.attn.{n}") for n in ("q", "k", "v"))
        attn = node("GroupQueryAttention",
                    [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", "seqlens_k",
                     "total_sequence_length", "cos_cache", "sin_cache"],
                    [p + ".attn.out", f"present.{i}.key", f"present.{i}.value"], MS,
                    num_heads=config.heads, kv_num_heads=kvh, do_rotary=1, rotary_interleaved=0,
                    scale=float(1 / np.sqrt(hd)))
        o = matmul_nbits(attn, layer["o"], p + ".attn.o")
        outs = [p + ".ffn_norm.out", "", "", p + ".ffn_norm.residual"]
        node("SkipSimplifiedLayerNormalization", [o, residual, init(p + ".ffn_norm", layer["ffn_norm"].astype(fl))],
             outs, MS, epsilon=config.eps)
        normed, residual = outs[0], outs[3]
        gate = matmul_nbits(normed, layer["gate"], p + ".mlp.gate")
        up = matmul_nbits(normed, layer["up"], p + ".mlp.up")
        sig = node("Sigmoid", [gate], [p + ".mlp.sigmoid"])
        silu = node("Mul", [gate, sig], [p + ".mlp.silu"])
        act = node("Mul", [silu, up], [p + ".mlp.act"])
        x = matmul_nbits(act, layer["down"], p + ".mlp.down")
    final = node("SkipSimplifiedLayerNormalization", [x, residual, init("norm", weights["norm"].astype(fl))],
                 ["final_norm.out"], MS, epsilon=config.eps)
    last = node("Gather", [final, "logits_index"], ["final_norm.last"], axis=1)
    lm_head = QuantLinear(embed.codes, embed.scales, embed.zero_points, 8, embed.block)
    n, k = lm_head.codes.shape
    node("MatMulNBits", [last, init("lm_head.qweight", pack_nbits(lm_head.codes, 8, lm_head.block)),
                         init("lm_head.scales", lm_head.scales.reshape(-1).astype(fl)),
                         init("lm_head.qzeros", pack_zero_points(lm_head.zero_points, 8))],
         ["logits"], MS, K=k, N=n, bits=8, block_size=lm_head.block, accuracy_level=0)

    kv_shape = [1, kvh, "max_length", hd]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence_length"]),
              helper.make_tensor_value_info("seqlens_k", TensorProto.INT32, [1]),
              helper.make_tensor_value_info("logits_index", TensorProto.INT64, [1])]
    outputs = [helper.make_tensor_value_info("logits", elem, [1, 1, config.vocab])]
    for i in range(config.layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", elem, kv_shape))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", elem, kv_shape))
    graph = helper.make_graph(nodes, "decoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)],
                              producer_name="webnn-wgsl tools/llm_model.py")
    model.ir_version = IR_VERSION
    return model


def save(model, folder: Path, config: Config, max_lengths=(64, DEFAULT_MAX_LENGTH, 1024),
         extra: dict | None = None, prefill_lengths=()) -> Path:
    """Write ``model-<L>.onnx`` per maximum context L (graphs only) + ``model.onnx.data`` (the
    weights, once) and ``genai_config.json`` (the shape the page reads) into ``folder``; returns
    the folder. ``model`` is changed (its weights become external references).

    ``prefill_lengths``: more graph files, offered as no context of their own: a prompt shorter
    than one of them prefills through it (its total_sequence_length literal is its length) into
    the larger context's cache, instead of through that context's full length."""
    import onnx
    from onnx import numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("model*.onnx*"):
        stale.unlink()
    tsl = next(t for t in model.graph.initializer if t.name == TSL)
    for i, length in enumerate(sorted(set(max_lengths) | set(prefill_lengths))):
        tsl.CopyFrom(numpy_helper.from_array(np.array(length, np.int32), TSL))
        path = folder / f"model-{length}.onnx"
        if i == 0:  # the weights go out once; the literals (shapes, axes: what shape inference reads) stay in the graph
            onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                            location="model.onnx.data", size_threshold=1024)
        else:
            onnx.save_model(model, str(path))
    meta = {"config": config.to_json(), "inputs": ["input_ids", "seqlens_k", "logits_index"],
            "max_lengths": sorted(max_lengths), "prefill_lengths": sorted(set(prefill_lengths) - set(max_lengths)),
            "kv": {"layers": config.layers, "kv_heads": config.kv_heads, "head_dim": config.head_dim,
                   "dataType": config.dtype},
            **(extra or {})}
    (folder / "genai_config.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return folder


#: the test suite's tiny decoder: head_dim 16 (onnxruntime's GQA wants a multiple of 8), the MLP's
#: down product with K = 72 (not a multiple of the block), 2 query heads per KV head
TINY = Config(vocab=300, hidden=64, layers=2, heads=4, kv_heads=2, ff=72, max_position=256)


def write_tiny(folder: Path, seed: int = 1, **overrides) -> tuple[Config, dict]:
    """Write the tiny random-weight decoder (TINY with ``overrides``) into ``folder``; returns its
    config and weights (for numpy references)."""
    config = dataclasses.replace(TINY, **overrides)
    weights = random_weights(config, seed)
    save(build_model(config, weights), Path(folder), config, (16, 32, 64),
         {"name": "tiny-random-decoder", "seed": seed})
    return config, weights
