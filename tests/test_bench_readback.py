"""tools/bench_readback.py: the nudge-mode comparison runs and counts nudges only where the
loop runs (forced on here: SwiftShader is a software adapter)."""

from __future__ import annotations

from tests.graph_runner import outside_event_loop
from tools.bench_readback import bench, format_table


def test_bench_readback_modes():
    forced = outside_event_loop(bench, [1, 25], reps=3, force=True, timeout_s=120)
    assert forced["hardware"] is False and [r["n"] for r in forced["rows"]] == [1, 25]
    for r in forced["rows"]:
        assert all(len(r["times"][m]) == 3 and min(r["times"][m]) > 0 for m in ("off", "submit", "write"))
        assert r["nudges"]["submit"] > 0 and r["nudges"]["write"] > 0
    assert "loop forced on" in format_table(forced)
    plain = outside_event_loop(bench, [25], reps=2, force=False, timeout_s=120)
    assert plain["rows"][0]["nudges"] == {"off": 0, "submit": 0, "write": 0}
