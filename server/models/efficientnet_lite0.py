"""EfficientNet-Lite0 as a WebNN JSON graph description.

Architecture (EfficientNet-Lite0: width 1.0, depth 1.0, no squeeze-excite,
ReLU6, stem and head not scaled), checked against the state dict's shapes:

* stem: 3x3 stride-2 conv, 32 channels, batch norm, ReLU6;
* 16 MBConv blocks in 7 stages of (kernel, stride, expand ratio, out
  channels, repeats) given by :data:`STAGES`; a block is [1x1 expand conv +
  BN + ReLU6 when expand ratio != 1] -> depthwise kxk conv (stride on the
  first block of a stage) + BN + ReLU6 -> 1x1 project conv + BN -> residual
  add when stride is 1 and input and output channels agree;
* head: 1x1 conv to 1280 + BN + ReLU6, global average pool, fully connected
  1280 -> 1000, softmax.

Tensor names in the checkpoint follow lukemelas/EfficientNet-PyTorch
(``_conv_stem``, ``_blocks.N._expand_conv``, ``_bn0`` ...). Batch norm
(epsilon :data:`BN_EPSILON`) is folded into each conv's filter and bias.
Convolutions use TensorFlow "SAME" padding (the checkpoint's
``Conv2dStaticSamePadding``): the extra row/column of an even split goes at the end.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

INPUT_NAME = "input"
OUTPUT_NAME = "probabilities"
INPUT_SIZE = 224
NUM_CLASSES = 1000
STEM_CHANNELS = 32
HEAD_CHANNELS = 1280
#: (kernel, stride, expand ratio, output channels, repeats) per stage
STAGES = ((3, 1, 1, 16, 1), (3, 2, 6, 24, 2), (5, 2, 6, 40, 2), (3, 2, 6, 80, 3),
          (5, 1, 6, 112, 3), (5, 2, 6, 192, 4), (3, 1, 6, 320, 1))
#: batch norm epsilon of the TensorFlow original and of EfficientNet-PyTorch's global params
BN_EPSILON = 1e-3
#: byte alignment of each constant inside weights.bin
ALIGNMENT = 16


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int, int]:
    """TensorFlow "SAME" padding for one spatial dim: (begin, end, output size).

    output = ceil(size / stride); total = max((output - 1) * stride + kernel - size, 0);
    begin = total // 2, end = total - begin (end-heavy).
    """
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2, out


class GraphWriter:
    """Accumulates constants (into one aligned little-endian blob) and operators."""

    def __init__(self) -> None:
        self.constants: dict[str, dict] = {}
        self.operators: list[dict] = []
        self._chunks: list[bytes] = []
        self._size = 0

    def constant(self, name: str, array: np.ndarray) -> dict:
        """Add float32 constant ``name``; returns its ``{"operand": name}`` reference."""
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        pad = -self._size % ALIGNMENT
        self._chunks.append(b"\0" * pad + data)
        self._size += pad
        self.constants[name] = {"dataType": "float32", "shape": list(array.shape),
                                "offset": self._size, "byteLength": len(data)}
        self._size += len(data)
        return {"operand": name}

    def op(self, op: str, args: list, output: str, options: dict | None = None) -> dict:
        """Append operator ``op``; returns ``{"operand": output}``."""
        entry = {"op": op, "args": args}
        if options:
            entry["options"] = options
        entry["outputs"] = output
        self.operators.append(entry)
        return {"operand": output}

    def weights(self) -> bytes:
        """The concatenated constants (weights.bin contents)."""
        return b"".join(self._chunks)


def _take(state: Mapping[str, np.ndarray], used: set, key: str, shape: tuple[int, ...]) -> np.ndarray:
    """Fetch ``state[key]`` as float64, checking its shape; record it as used."""
    if key not in state:
        raise ValueError(f"checkpoint lacks {key!r}")
    value = np.asarray(state[key], dtype=np.float64)
    if value.shape != shape:
        raise ValueError(f"{key}: shape {value.shape}, architecture expects {shape}")
    used.add(key)
    return value


def _folded_conv(state, used, conv: str, bn: str, out_ch: int, in_ch: int, kernel: int):
    """Return (filter OIHW, bias) of conv ``conv`` with batch norm ``bn`` folded in."""
    filt = _take(state, used, f"{conv}.weight", (out_ch, in_ch, kernel, kernel))
    gamma, beta, mean, var = (_take(state, used, f"{bn}.{p}", (out_ch,))
                              for p in ("weight", "bias", "running_mean", "running_var"))
    used.add(f"{bn}.num_batches_tracked")
    scale = gamma / np.sqrt(var + BN_EPSILON)
    return filt * scale[:, None, None, None], beta - mean * scale


def _conv_bn(g: GraphWriter, x: dict, state, used, name: str, conv: str, bn: str, *,
             in_ch: int, out_ch: int, kernel: int, stride: int, size: int,
             depthwise: bool = False, relu6: bool = True) -> tuple[dict, int]:
    """Emit conv2d (+ clamp 0..6) for one conv+BN pair; returns (operand, output size)."""
    filt, bias = _folded_conv(state, used, conv, bn, out_ch, 1 if depthwise else in_ch, kernel)
    begin, end, out_size = same_padding(size, kernel, stride)
    options = {}
    if begin or end:
        options["padding"] = [begin, end, begin, end]
    if stride != 1:
        options["strides"] = [stride, stride]
    if depthwise:
        options["groups"] = in_ch
    options["bias"] = g.constant(f"{name}.bias", bias)
    y = g.op("conv2d", [x, g.constant(f"{name}.filter", filt)], name, options)
    if relu6:
        y = g.op("clamp", [y], f"{name}.relu6", {"minValue": 0, "maxValue": 6})
    return y, out_size


def build_graph(state: Mapping[str, np.ndarray]) -> tuple[dict, bytes]:
    """Build the graph description and weights blob from the checkpoint's state dict.

    Returns (description with ``inputs``, ``constants`` (offset/byteLength into
    the blob), ``operators``, ``outputs``; the blob). Raises ValueError when a
    tensor is missing, has another shape than the architecture, or is left
    unused (e.g. squeeze-excite weights of a non-Lite model).
    """
    g, used = GraphWriter(), set()
    x, size = _conv_bn(g, {"operand": INPUT_NAME}, state, used, "stem", "_conv_stem", "_bn0",
                       in_ch=3, out_ch=STEM_CHANNELS, kernel=3, stride=2, size=INPUT_SIZE)
    in_ch, index = STEM_CHANNELS, 0
    for kernel, stage_stride, expand, out_ch, repeats in STAGES:
        for repeat in range(repeats):
            stride = stage_stride if repeat == 0 else 1
            prefix, name = f"_blocks.{index}", f"block{index}"
            block_input, hidden = x, in_ch * expand
            if expand != 1:
                x, _ = _conv_bn(g, x, state, used, f"{name}.expand", f"{prefix}._expand_conv",
                                f"{prefix}._bn0", in_ch=in_ch, out_ch=hidden, kernel=1, stride=1, size=size)
            x, size = _conv_bn(g, x, state, used, f"{name}.depthwise", f"{prefix}._depthwise_conv",
                               f"{prefix}._bn1", in_ch=hidden, out_ch=hidden, kernel=kernel,
                               stride=stride, size=size, depthwise=True)
            x, _ = _conv_bn(g, x, state, used, f"{name}.project", f"{prefix}._project_conv",
                            f"{prefix}._bn2", in_ch=hidden, out_ch=out_ch, kernel=1, stride=1,
                            size=size, relu6=False)
            if stride == 1 and in_ch == out_ch:
                x = g.op("add", [x, block_input], f"{name}.add")
            in_ch, index = out_ch, index + 1
    x, _ = _conv_bn(g, x, state, used, "head", "_conv_head", "_bn1",
                    in_ch=in_ch, out_ch=HEAD_CHANNELS, kernel=1, stride=1, size=size)
    x = g.op("averagePool2d", [x], "pool", {"windowDimensions": [size, size]})
    x = g.op("reshape", [x, [1, HEAD_CHANNELS]], "flatten")
    fc_weight = _take(state, used, "_fc.weight", (NUM_CLASSES, HEAD_CHANNELS))
    fc_bias = _take(state, used, "_fc.bias", (NUM_CLASSES,))
    x = g.op("gemm", [x, g.constant("fc.weight", fc_weight)], "logits",
             {"c": g.constant("fc.bias", fc_bias), "bTranspose": True})
    g.op("softmax", [x, 1], OUTPUT_NAME)
    unused = sorted(set(state) - used)
    if unused:
        raise ValueError(f"checkpoint tensors not used by EfficientNet-Lite0: {unused[:5]}")
    description = {
        "inputs": {INPUT_NAME: {"dataType": "float32", "shape": [1, 3, INPUT_SIZE, INPUT_SIZE]}},
        "constants": g.constants,
        "operators": g.operators,
        "outputs": [OUTPUT_NAME],
    }
    return description, g.weights()
