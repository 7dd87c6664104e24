"""ONNX's own operator (node) test cases, prepared for ONNX Runtime Web's WebNN EP on the polyfill.

``python -m tools.onnx_node_cases`` (what ``make setup`` runs) takes every case of the installed
onnx package's ``onnx.backend.test.case.node.collect_testcases()`` and writes, into the git-ignored
``server/models/generated/onnx-node/`` (served under ``/models/onnx-node/``):

- ``index.json``: ``{onnxVersion, cases: [{name, op, ops, selected, reason?, frozen?}]}`` for every
  case; ``selected`` cases use only operators of ORT-web's WebNN EP op table (:data:`WEBNN_EP_OPS`)
  and only tensor types WebNN has (:data:`WEBNN_TYPES`), and no sequences or optionals;
- per selected case ``<name>/model.onnx`` and ``<name>/case.json``:
  ``{inputs: [names], outputs: [names], datasets: [{inputs: [T], outputs: [T]}], frozen: [names],
  rtol, atol}`` with T = ``{name, type, shape, bytes}`` (type: ORT-web's tensor type name, bytes:
  base64 of the little-endian data);
- ``<name>/model_frozen.onnx`` when the case feeds a graph input into an attribute-like input of a
  node (:data:`ATTRIBUTE_LIKE_INPUTS`: Clip's min/max, Reshape's shape, the axes of reductions,
  ...): the same model with those inputs turned into initializers holding the first data set's
  values (ORT's WebNN EP needs them constant), for the runner's re-run.

The runner is ``tools/onnx_node_tests.py``. The case set is that of the onnx version pinned in
pyproject.toml's test extras (:data:`ONNX_VERSION`); another version prints a warning.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "server" / "models" / "generated" / "onnx-node"
#: The onnx release whose node tests the subset, the docs and the verdicts were measured with.
ONNX_VERSION = "1.23.2"

#: ONNX operators ORT-web 1.30's WebNN EP maps (onnxruntime/core/providers/webnn/builders/
#: map_info.h: the keys of op_inputs_map and of decomposed_op_map), names only.
WEBNN_EP_OPS = frozenset("""
Abs Add And ArgMax ArgMin AveragePool BatchNormalization Cast Ceil Clip Concat Conv ConvInteger
ConvTranspose Cos CumSum DepthToSpace DequantizeLinear Div Dropout DynamicQuantizeLinear Einsum Elu
Equal Erf Exp Expand Flatten Floor GRU Gather GatherElements GatherND Gelu Gemm GlobalAveragePool
GlobalLpPool GlobalMaxPool Greater GreaterOrEqual GroupNormalization HardSigmoid HardSwish Identity
InstanceNormalization IsInf IsNaN LRN LSTM LayerNormalization LeakyRelu Less LessOrEqual Log
LpNormalization LpPool MatMul MatMulInteger Max MaxPool Min Mul Neg Not Or PRelu Pad Pow
QuantizeLinear Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean
ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize RotaryEmbedding Round
ScatterElements ScatterND Shape Sigmoid Sign Sin Slice Softmax Softplus Softsign Split Sqrt Squeeze
Sub Tan Tanh Tile Transpose Trilu Unsqueeze Where Xor
""".split())

#: ONNX TensorProto element type -> ORT-web tensor type, for the types WebNN has (bool travels as
#: uint8; int4/uint4 are left out: ORT-web packs them and the polyfill's support is not tested here).
WEBNN_TYPES = {1: "float32", 10: "float16", 6: "int32", 12: "uint32", 7: "int64", 13: "uint64",
               3: "int8", 2: "uint8", 9: "bool"}
NUMPY_TYPES = {"float32": "<f4", "float16": "<f2", "int32": "<i4", "uint32": "<u4", "int64": "<i8",
               "uint64": "<u8", "int8": "i1", "uint8": "u1", "bool": "?"}

#: operator -> indices of inputs that are attributes in all but name (ORT's WebNN EP reads them
#: at session creation, so they must be initializers); only graph inputs among them are frozen.
ATTRIBUTE_LIKE_INPUTS: dict[str, tuple[int, ...]] = {
    "Clip": (1, 2), "Reshape": (1,), "Expand": (1,), "Pad": (1, 2, 3), "Slice": (1, 2, 3, 4),
    "Tile": (1,), "Resize": (1, 2, 3), "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,),
    "CumSum": (1,), "Dropout": (1, 2), "Trilu": (1,),
    **{op: (1,) for op in ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                           "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare")},
    "QuantizeLinear": (1, 2), "DequantizeLinear": (1, 2), "RotaryEmbedding": (1, 2, 3),
    "LSTM": (1, 2, 3, 4, 5, 6, 7), "GRU": (1, 2, 3, 4, 5), "BatchNormalization": (1, 2, 3, 4),
    "InstanceNormalization": (1, 2), "LayerNormalization": (1, 2), "GroupNormalization": (1, 2),
    "PRelu": (1,), "Conv": (1, 2), "ConvTranspose": (1, 2), "ConvInteger": (1, 2, 3),
    "MatMulInteger": (2, 3), "Gemm": (2,),
}


def _array(value: Any) -> np.ndarray | None:
    """A data set value as an ndarray (None for sequences, optionals and missing values)."""
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    return None


def _tensor(name: str, type_name: str, array: np.ndarray) -> dict[str, Any]:
    raw = np.ascontiguousarray(array, dtype=NUMPY_TYPES[type_name]).tobytes()
    return {"name": name, "type": type_name, "shape": [int(d) for d in array.shape],
            "bytes": base64.b64encode(raw).decode("ascii")}


def _value_types(model) -> list[int]:
    """Element types of every graph input, output, initializer and inferred intermediate value
    (0 for non-tensor values: sequences, optionals, maps)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - the model's own declarations still count
        inferred = model
    graph = inferred.graph
    types = [init.data_type for init in graph.initializer]
    for info in list(graph.input) + list(graph.output) + list(graph.value_info):
        kind = info.type.WhichOneof("value")
        types.append(info.type.tensor_type.elem_type if kind == "tensor_type" else 0)
    for node in graph.node:  # Cast/CastLike targets and the like that inference may not reach
        for attr in node.attribute:
            if attr.name == "to":
                types.append(attr.i)
    return types


def _ops(model) -> list[str]:
    """Operator types of the model's nodes, with subgraph (If/Loop/Scan body) operators."""
    def walk(graph):
        for node in graph.node:
            yield node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
            for attr in node.attribute:
                if attr.g.node:
                    yield from walk(attr.g)
    return sorted(set(walk(model.graph)))


def _frozen_inputs(model) -> list[str]:
    """Graph inputs that feed an attribute-like input (ATTRIBUTE_LIKE_INPUTS) of some node."""
    graph_inputs = {i.name for i in model.graph.input} - {i.name for i in model.graph.initializer}
    names = []
    for node in model.graph.node:
        for index in ATTRIBUTE_LIKE_INPUTS.get(node.op_type, ()):
            if index < len(node.input) and node.input[index] in graph_inputs and node.input[index] not in names:
                names.append(node.input[index])
    return names


def _freeze(model, values: dict[str, np.ndarray]):
    """A copy of ``model`` with the graph inputs ``values`` names turned into initializers."""
    import onnx
    from onnx import numpy_helper

    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    keep = [i for i in frozen.graph.input if i.name not in values]
    del frozen.graph.input[:]
    frozen.graph.input.extend(keep)
    for name, array in values.items():
        frozen.graph.initializer.append(numpy_helper.from_array(array, name))
    return frozen


def primary_op(name: str, ops: list[str], single_op: dict[str, str]) -> str:
    """The operator a case tests: its node's type; for a function expansion (``..._expanded``)
    the type of its unexpanded sibling, marked ``(expanded)``."""
    if "_expanded" in name:
        base = name.split("_expanded")[0]
        return f"{single_op.get(base, '+'.join(ops))} (expanded)"
    return ops[0] if len(ops) == 1 else "+".join(ops)


def describe(case) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(index entry, case.json content or None) of one onnx TestCase."""
    model = case.model
    ops = _ops(model)
    entry: dict[str, Any] = {"name": case.name, "ops": ops}
    missing = [op for op in ops if op not in WEBNN_EP_OPS]
    if missing:
        return {**entry, "selected": False, "reason": "ops not in ORT's WebNN EP table: " + ", ".join(missing)}, None
    bad_types = sorted({t for t in _value_types(model) if t not in WEBNN_TYPES})
    if bad_types:
        import onnx

        names = [onnx.TensorProto.DataType.Name(t) if t else "non-tensor" for t in bad_types]
        return {**entry, "selected": False, "reason": "types WebNN lacks: " + ", ".join(names)}, None
    inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    outputs = [o.name for o in model.graph.output]
    types = {i.name: WEBNN_TYPES[i.type.tensor_type.elem_type] for i in list(model.graph.input) + list(model.graph.output)}
    datasets = []
    for ins, outs in case.data_sets:
        arrays_in = [_array(v) for v in ins]
        arrays_out = [_array(v) for v in outs]
        if len(arrays_in) != len(inputs) or len(arrays_out) != len(outputs) or any(
                a is None for a in arrays_in + arrays_out):
            return {**entry, "selected": False, "reason": "data sets with missing or non-tensor values"}, None
        datasets.append({"inputs": [_tensor(n, types[n], a) for n, a in zip(inputs, arrays_in)],
                         "outputs": [_tensor(n, types[n], a) for n, a in zip(outputs, arrays_out)]})
    frozen = _frozen_inputs(model)
    entry.update(selected=True, frozen=frozen)
    return entry, {"inputs": inputs, "outputs": outputs, "datasets": datasets, "frozen": frozen,
                   "rtol": float(case.rtol), "atol": float(case.atol)}


def generate(out: Path = OUT) -> dict[str, Any]:
    """Write every case (see the module docstring) into ``out``; returns the index."""
    import onnx
    from onnx.backend.test.case.node import collect_testcases

    if onnx.__version__ != ONNX_VERSION:
        print(f"warning: onnx {onnx.__version__} installed; the case lists were made with {ONNX_VERSION}",
              file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators' own overflow/NaN casts
        cases = collect_testcases()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    entries = []
    for case in sorted(cases, key=lambda c: c.name):
        entry, content = describe(case)
        entries.append(entry)
        if content is None:
            continue
        folder = out / case.name
        folder.mkdir()
        (folder / "model.onnx").write_bytes(case.model.SerializeToString())
        (folder / "case.json").write_text(json.dumps(content), encoding="utf-8")
        if content["frozen"]:
            first = {t["name"]: t for t in content["datasets"][0]["inputs"]}
            values = {n: np.frombuffer(base64.b64decode(first[n]["bytes"]), NUMPY_TYPES[first[n]["type"]])
                      .reshape(first[n]["shape"]) for n in content["frozen"]}
            (folder / "model_frozen.onnx").write_bytes(_freeze(case.model, values).SerializeToString())
    single = {e["name"]: e["ops"][0] for e in entries if len(e["ops"]) == 1}
    for entry in entries:
        entry["op"] = primary_op(entry["name"], entry["ops"], single)
    index = {"onnxVersion": onnx.__version__, "cases": entries}
    (out / "index.json").write_text(json.dumps(index, indent=0), encoding="utf-8")
    return index


def load_index(out: Path = OUT) -> dict[str, Any]:
    """``index.json`` of ``out``.

    Raises:
        FileNotFoundError: the cases were not generated (``make setup``).
    """
    path = out / "index.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run make setup (python -m tools.onnx_node_cases)")
    return json.loads(path.read_text(encoding="utf-8"))


def main() -> int:
    index = generate()
    selected = sum(e["selected"] for e in index["cases"])
    print(f"wrote {selected} of {len(index['cases'])} onnx {index['onnxVersion']} node cases into {OUT}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
