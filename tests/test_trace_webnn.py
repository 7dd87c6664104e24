"""tools/trace_webnn.py: what ORT-web's WebNN EP calls per session.run on the polyfill, against
our builder code, and where the held input upload goes (static/polyfill/gpu/pending_writes.js).

Uses the 2-layer encoder that ``make setup`` generates (server/models/generated/bert-encoder/)
and onnxruntime-web from static/demos/bench-ort/vendor/ (also ``make setup``).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.graph_runner import outside_event_loop

REPO = Path(__file__).resolve().parent.parent
VENDOR = REPO / "static" / "demos" / "bench-ort" / "vendor"
MODEL = REPO / "server" / "models" / "generated" / "bert-encoder"
IO_BYTES = 128 * 256 * 4


def top_level(entries):
    return [e["name"] for e in entries if e.get("layer") == "webnn" and e["depth"] == 0]


def test_steady_state_calls_and_upload():
    from tools.trace_webnn import format_report, trace

    for path in (VENDOR / "ort.min.mjs", MODEL / "model.onnx", MODEL / "input.bin"):
        if not path.is_file():
            pytest.fail(f"{path} is missing: run make setup")
    run = outside_event_loop(trace, "bert-encoder", 2, 1, ["builder/held", "webnn-ep/write-now", "webnn-ep/held"],
                             600, generate=False, held=True)
    for name, view in (("builder", "Float32Array"), ("webnn-ep", "Uint8Array")):
        entries = run["calls"][name]["entries"]
        # one upload, one dispatch, one read into a fresh ArrayBuffer: no tensors created or
        # destroyed, no graph built, no opSupportLimits per run
        assert top_level(entries) == ["MLContext.writeTensor", "MLContext.dispatch", "MLContext.readTensor"], entries
        write, dispatch, read = (e for e in entries if e.get("layer") == "webnn" and e["depth"] == 0)
        assert f"{view}({IO_BYTES}B)" in write["args"] and read["args"].count("MLTensor") == 1 and "), " not in read["args"]
        # the 128 KiB upload goes through the tensor's mapped upload buffer inside writeTensor
        # (unmap, copy, submit: gpu/pending_writes.js), no writeBuffer of its bytes; then the
        # graph's submit inside dispatch
        before = [e["name"] for e in entries if write["seq"] < e["seq"] < dispatch["seq"]]
        assert before[:4] == ["GPUBuffer.unmap", "GPUDevice.createCommandEncoder",
                              "GPUCommandEncoder.copyBufferToBuffer", "GPUQueue.submit"], before
        assert not [e for e in entries if e["name"] == "GPUQueue.writeBuffer"], entries
        inside = [e["name"] for e in entries if dispatch["seq"] < e["seq"] < read["seq"]]
        assert "GPUQueue.submit" in inside, inside
    for pattern in ("builder/held", "webnn-ep/write-now", "webnn-ep/held"):
        r = run["patterns"][pattern]
        assert len(r["times"]) == 2 and all(t > 0 for t in r["times"])
        assert len(r["phases"]["writeToDispatch"]) == 2
    text = format_report(run)
    assert "| webnn-ep/held |" in text and "MLContext.dispatch(" in text
