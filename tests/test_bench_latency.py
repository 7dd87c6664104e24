"""tools/bench_latency.py: each requested mode is timed on a cross-origin isolated page, the
stamped modes carry a GPU span, the by-hand read reports its parts, and unknown modes are refused."""

from __future__ import annotations

import pytest

from tests.graph_runner import outside_event_loop
from tools.bench_latency import bench, format_table, main

MODES = ["full", "full-old", "stamped", "read4", "read1m-steps", "early"]


def test_bench_latency_modes():
    r = outside_event_loop(bench, ["bert-encoder"], reps=2, gap_ms=0, batch=2, modes=MODES, timeout_s=240)
    assert r["crossOriginIsolated"] is True
    m = r["models"]["bert-encoder"]
    assert m["steps"] > 1 and m["batchMs"] > 0
    assert list(m["times"]) == MODES and all(len(xs) == 2 and min(xs) > 0 for xs in m["times"].values())
    # the span is the GPU's part of the run: positive, and within the run's own round trip
    assert len(m["spans"]["stamped"]) == 2
    assert all(0 < s <= t for s, t in zip(m["spans"]["stamped"], m["times"]["stamped"]))
    parts = m["parts"]["read1m-steps"]
    assert set(parts) >= {"getMappedRange", "firstCopy", "plainCopy"} and parts["check"] == [1 << 20] * 2
    table = format_table(r)
    assert "| read4 |" in table and "read1m-steps parts" in table and "cross-origin isolated" in table


def test_bench_latency_refuses_unknown_modes(capsys):
    with pytest.raises(SystemExit):
        main(["--modes", "full,nonsense"])
    assert "unknown modes: nonsense" in capsys.readouterr().err
