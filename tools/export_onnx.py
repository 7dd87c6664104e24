"""Convert a model manifest (JSON graph description + weights.bin) into an ONNX model.

Used to run the very same network through ONNX Runtime (``tools/bench_ort.py``,
``static/demos/bench-ort/``). Supports the operators the EfficientNet-Lite0 manifest and tools/bench_models.py use:
``conv2d`` (padding, strides, dilations, groups, bias; NCHW input, OIHW filter),
``clamp``, ``add``/``sub``/``mul``/``div``/``matmul``, ``erf``, ``transpose`` (permutation),
``layerNormalization`` (trailing axes, scale, bias, epsilon), ``averagePool2d`` (windowDimensions, strides, padding; NCHW),
``reshape``, ``gemm`` (alpha, beta, aTranspose, bTranspose, c), ``softmax`` (axis), ``pow``,
``sqrt`` and ``reduceMean`` (axes, keepDimensions). Anything else raises ``ValueError``. The opset
is ``--opset``, else the manifest's ``onnxOpset``, else 17 (a manifest that writes layer norms
out, as PyTorch exports them below opset 17, asks for 14: ONNX Runtime's basic graph level
would otherwise fuse them into LayerNormalization before its WebNN EP sees them).

By default the float32 constants are *not* copied: each ONNX initializer is stored as
external data pointing at the manifest's own ``weights.bin`` (same offset and length), so
the model file is a few tens of kB and both runtimes read one weights blob. ``--embed``
writes a self-contained model instead. The layouts agree, so no constant is reordered:
WebNN's default conv2d filter layout ``oihw`` (``[O, I/groups, H, W]``) is ONNX's, and
gemm ``bTranspose`` is ONNX ``transB``.

Usage::

    python -m tools.export_onnx [--manifest server/models/generated/efficientnet-lite0/manifest.json]
                                [--out .../model.onnx] [--embed] [--opset 17]

Needs the ``onnx`` package (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Mapping

MODEL_DIR = Path("server/models/generated/efficientnet-lite0")
DEFAULT_MANIFEST = MODEL_DIR / "manifest.json"
DEFAULT_OPSET = 17


def _operand(value: Any) -> str:
    """The operand name of ``{"operand": name}``; ValueError for anything else."""
    if isinstance(value, dict) and set(value) == {"operand"}:
        return value["operand"]
    raise ValueError(f"expected an operand reference, got {value!r}")


def _pads(padding: list[int] | None, spatial: int = 2) -> list[int]:
    """WebNN ``[beginH, endH, beginW, endW]`` -> ONNX ``[beginH, beginW, endH, endW]``."""
    padding = list(padding or [0] * (2 * spatial))
    return padding[0::2] + padding[1::2]


def _check_layout(op: str, options: Mapping[str, Any]) -> None:
    """Refuse layouts the converter does not translate (only NCHW / OIHW)."""
    if options.get("inputLayout", "nchw") != "nchw":
        raise ValueError(f"{op}: only inputLayout 'nchw' is supported")
    if op == "conv2d" and options.get("filterLayout", "oihw") != "oihw":
        raise ValueError("conv2d: only filterLayout 'oihw' is supported")


def _initializer(name: str, spec: Mapping[str, Any], weights_path: Path, embed: bool, onnx_mod):
    """One manifest constant as an ONNX TensorProto (external data into weights.bin, or embedded).

    Raises:
        ValueError: the constant is not float32.
    """
    from onnx import TensorProto

    if spec["dataType"] != "float32":
        raise ValueError(f"constant {name}: only float32 constants are supported, not {spec['dataType']}")
    tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(spec["shape"]))
    if embed:
        with weights_path.open("rb") as f:
            f.seek(spec["offset"])
            tensor.raw_data = f.read(spec["byteLength"])
    else:
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", weights_path.name), ("offset", str(spec["offset"])),
                           ("length", str(spec["byteLength"]))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
    return tensor


#: WebNN binary operator -> ONNX op (both broadcast NumPy-style)
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "matmul": "MatMul", "pow": "Pow"}
_UNARY = {"erf": "Erf", "sqrt": "Sqrt"}


def _layer_norm(operator: Mapping[str, Any], name: str, out: str, helper):
    """layerNormalization -> ONNX LayerNormalization (opset 17): the axes must be the trailing
    dimensions in order ([axis, ..., rank-1]), and scale and bias are required (ONNX has no
    default scale)."""
    options = operator.get("options") or {}
    axes = options.get("axes")
    if not axes or list(axes) != list(range(axes[0], axes[0] + len(axes))) or "scale" not in options:
        raise ValueError("layerNormalization: needs trailing, ascending axes and a scale "
                         f"(ONNX LayerNormalization normalizes axis..rank-1); got {options!r}")
    inputs = [_operand(operator["args"][0]), _operand(options["scale"])]
    if "bias" in options:
        inputs.append(_operand(options["bias"]))
    # ONNX wants axis < rank; since the axes are trailing, axis = first axis (non-negative).
    return helper.make_node("LayerNormalization", inputs, [out], name=name, axis=int(axes[0]),
                            epsilon=float(options.get("epsilon", 1e-5)))


def _node(operator: Mapping[str, Any], index: int, consts: list, helper, numpy_helper, opset: int = DEFAULT_OPSET):
    """The ONNX node(s) for one manifest operator; extra scalar/shape initializers go to ``consts``."""
    import numpy as np

    op = operator["op"]
    args = operator.get("args", [])
    options = dict(operator.get("options") or {})
    out = operator["outputs"]
    if not isinstance(out, str):
        raise ValueError(f"{op}: only single-output operators are supported")
    name = f"{op}_{index}"

    def const(suffix: str, array) -> str:
        cname = f"{name}.{suffix}"
        consts.append(numpy_helper.from_array(array, cname))
        return cname

    if op == "conv2d":
        _check_layout(op, options)
        inputs = [_operand(args[0]), _operand(args[1])]
        if "bias" in options:
            inputs.append(_operand(options["bias"]))
        attrs = {"pads": _pads(options.get("padding")), "strides": list(options.get("strides", [1, 1])),
                 "dilations": list(options.get("dilations", [1, 1])), "group": int(options.get("groups", 1))}
        return [helper.make_node("Conv", inputs, [out], name=name, **attrs)]
    if op == "clamp":
        lo = const("min", np.array(options.get("minValue", -np.inf), np.float32))
        hi = const("max", np.array(options.get("maxValue", np.inf), np.float32))
        return [helper.make_node("Clip", [_operand(args[0]), lo, hi], [out], name=name)]
    if op in _BINARY:
        return [helper.make_node(_BINARY[op], [_operand(args[0]), _operand(args[1])], [out], name=name)]
    if op in _UNARY:
        return [helper.make_node(_UNARY[op], [_operand(args[0])], [out], name=name)]
    if op == "reduceMean":
        if "axes" not in options:
            raise ValueError("reduceMean: the axes option is required")
        keep = int(bool(options.get("keepDimensions", False)))
        if opset >= 18:  # axes became an input in opset 18
            axes = const("axes", np.array(options["axes"], np.int64))
            return [helper.make_node("ReduceMean", [_operand(args[0]), axes], [out], name=name, keepdims=keep)]
        return [helper.make_node("ReduceMean", [_operand(args[0])], [out], name=name, keepdims=keep,
                                 axes=list(options["axes"]))]
    if op == "transpose":
        if "permutation" not in options:
            raise ValueError("transpose: the permutation option is required (the default needs the rank)")
        return [helper.make_node("Transpose", [_operand(args[0])], [out], name=name,
                                 perm=list(options["permutation"]))]
    if op == "layerNormalization":
        return [_layer_norm(operator, name, out, helper)]
    if op == "averagePool2d":
        _check_layout(op, options)
        if options.get("outputSizes") or options.get("roundingType", "floor") != "floor":
            raise ValueError("averagePool2d: outputSizes / roundingType 'ceil' are not supported")
        if "windowDimensions" not in options:
            return [helper.make_node("GlobalAveragePool", [_operand(args[0])], [out], name=name)]
        attrs = {"kernel_shape": list(options["windowDimensions"]), "pads": _pads(options.get("padding")),
                 "strides": list(options.get("strides", [1, 1])), "count_include_pad": 0}
        if list(options.get("dilations", [1, 1])) != [1, 1]:
            attrs["dilations"] = list(options["dilations"])  # AveragePool has them from opset 19
        return [helper.make_node("AveragePool", [_operand(args[0])], [out], name=name, **attrs)]
    if op == "reshape":
        shape = const("shape", np.array(args[1], np.int64))
        return [helper.make_node("Reshape", [_operand(args[0]), shape], [out], name=name)]
    if op == "gemm":
        inputs = [_operand(args[0]), _operand(args[1])]
        if "c" in options:
            inputs.append(_operand(options["c"]))
        attrs = {"alpha": float(options.get("alpha", 1.0)), "beta": float(options.get("beta", 1.0)),
                 "transA": int(bool(options.get("aTranspose", False))),
                 "transB": int(bool(options.get("bTranspose", False)))}
        return [helper.make_node("Gemm", inputs, [out], name=name, **attrs)]
    if op == "softmax":
        axis = args[1] if len(args) > 1 else options.get("axis")
        if axis is None:
            raise ValueError("softmax: the axis argument is required")
        return [helper.make_node("Softmax", [_operand(args[0])], [out], name=name, axis=int(axis))]
    raise ValueError(f"operator {op!r} has no ONNX translation in tools/export_onnx.py")


def build_model(manifest: Mapping[str, Any], weights_path: Path, *, embed: bool = False,
                opset: int = DEFAULT_OPSET):
    """The ONNX ``ModelProto`` for a manifest.

    Args:
        manifest: the JSON graph description (float32 inputs/constants; ``outputs`` names).
        weights_path: the manifest's weights.bin; with ``embed=False`` only its file name is
            recorded (the model must be saved next to it), else its bytes are copied.
        embed: copy the constants into the model instead of referencing weights.bin.
        opset: the default-domain opset version (>= 13: Clip takes min/max as inputs).

    Raises:
        ValueError: an operator, layout or data type the converter does not handle.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    consts = [_initializer(n, s, weights_path, embed, onnx) for n, s in manifest.get("constants", {}).items()]
    nodes = []
    for index, operator in enumerate(manifest["operators"]):
        nodes += _node(operator, index, consts, helper, numpy_helper, opset)
    inputs = []
    for name, spec in manifest["inputs"].items():
        if spec["dataType"] != "float32":
            raise ValueError(f"input {name}: only float32 inputs are supported")
        inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(spec["shape"])))
    declared = manifest.get("output") or {}
    outputs = [helper.make_tensor_value_info(
        name, TensorProto.FLOAT, list(declared["shape"]) if declared.get("name") == name else None)
        for name in manifest["outputs"]]
    graph = helper.make_graph(nodes, manifest.get("name", "model"), inputs, outputs, initializer=consts)
    model = helper.make_model(graph, producer_name="webnn-wgsl tools/export_onnx.py",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)  # readable by older runtimes too
    return model


def export(manifest_path: Path, out: Path | None = None, *, embed: bool = False,
           opset: int | None = None) -> Path:
    """Convert ``manifest_path`` (and the weights.bin it names) into ``out`` and check it.

    Without ``embed`` the model references weights.bin by file name, so ``out`` must lie in
    the manifest's folder (ValueError otherwise). ``opset``: default the manifest's
    ``onnxOpset``, else DEFAULT_OPSET. Returns the path written.
    """
    import onnx

    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if opset is None:
        opset = int(manifest.get("onnxOpset", DEFAULT_OPSET))
    weights_path = manifest_path.parent / manifest["weights"]
    out = out or manifest_path.parent / "model.onnx"
    if not embed and out.absolute().parent != weights_path.absolute().parent:
        raise ValueError(f"{out} must lie next to {weights_path} (it references it), or pass --embed")
    model = build_model(manifest, weights_path, embed=embed, opset=opset)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(model.SerializeToString())
    onnx.checker.check_model(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tools.export_onnx", description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    parser.add_argument("--out", type=Path, help="default: model.onnx next to the manifest")
    parser.add_argument("--embed", action="store_true", help="copy the weights into the model")
    parser.add_argument("--opset", type=int, help=f"default: the manifest's onnxOpset, else {DEFAULT_OPSET}")
    args = parser.parse_args(argv)
    out = export(args.manifest, args.out, embed=args.embed, opset=args.opset)
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
