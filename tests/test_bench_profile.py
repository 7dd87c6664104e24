"""``--profile`` of the kernel benchmarks (tools/bench_page.py, bench_matmul.py, bench_conv.py):
the top-steps table, and a real profiled run of the smallest matmul case on this adapter."""

from __future__ import annotations

from tests.graph_runner import outside_event_loop
from tools.bench_page import top_steps_table


def test_top_steps_table_sorts_and_names_operators():
    steps_a = [{"index": 0, "name": "c1", "kernel": "conv2d", "operators": [{"type": "conv2d", "label": "c1"}], "ms": 0.5},
               {"index": 1, "name": "relu", "kernel": "relu", "operators": [{"type": "relu", "label": ""}], "ms": 2.25}]
    steps_b = [{"index": 0, "name": "input x: unpack float16", "kernel": "unpack_float16", "operators": [], "ms": 1.0}]
    text = top_steps_table([("a", steps_a), ("b", steps_b), ("none", None)], n=2)
    lines = text.splitlines()
    assert lines[0].startswith("top 2 GPU steps")
    assert lines[3] == "| 2.2500 | a | 1 relu | relu | relu |"
    assert lines[4] == "| 1.0000 | b | 0 input x: unpack float16 | unpack_float16 | (input conversion) |"
    assert len(lines) == 5
    assert "conv2d 'c1'" in top_steps_table([("a", steps_a)])
    assert top_steps_table([("x", None)]) == "no profiled steps"


def test_bench_matmul_profile_prints_steps():
    from tools.bench_matmul import bench, cases, format_table

    small = [c for c in cases(256) if c["name"] in ("matmul 256^3", "softmax 1x1000")]
    result = outside_event_loop(bench, small, ["auto"], reps=1, batch=1, timeout_s=120, profile=True)
    assert [len(r["steps"]) for r in result["rows"]] == [1, 1]
    assert all(r["steps"][0]["ms"] > 0 for r in result["rows"])
    assert {r["steps"][0]["operators"][0]["type"] for r in result["rows"]} == {"matmul", "softmax"}
    table = format_table(result)
    assert "top 2 GPU steps" in table and "| matmul 256^3 auto | 0 matmul |" in table
    plain = outside_event_loop(bench, small[:1], ["auto"], reps=1, batch=1, timeout_s=120)
    assert plain["rows"][0].get("steps") is None and "GPU steps" not in format_table(plain)


def test_bench_matmul_shapes_and_override_variants():
    """--shapes parses MxKxN into matmul cases; --overrides become labelled variants next to the kernels."""
    import pytest

    import argparse

    from tools.bench_matmul import parse_shapes, parse_sizes, shape_cases, variants

    assert parse_shapes("128x768x2304, 4000X4000x4000,") == [(128, 768, 2304), (4000, 4000, 4000)]
    for bad in ("128x768", "0x4x4", "axbxc"):
        with pytest.raises(argparse.ArgumentTypeError, match="MxKxN"):
            parse_shapes(bad)
    assert parse_sizes("4096, 896x4864") == [4096, (896, 4864)] and parse_sizes("auto") == "auto"
    for bad in ("100x64", "64x", "0", "64x128x2", "abc"):
        with pytest.raises(argparse.ArgumentTypeError, match="S or KxN"):
            parse_sizes(bad)
    (case,) = shape_cases([(128, 768, 2304)])
    assert case["inputs"] == {"a": [128, 768], "b": [768, 2304]} and case["flops"] == 2 * 128 * 768 * 2304
    assert variants(["auto", "tiled"], [{"matmul": "tiled", "splitK": 2}]) == [
        {"label": "auto", "overrides": None}, {"label": "tiled", "overrides": {"matmul": "tiled"}},
        {"label": '{"matmul":"tiled","splitK":2}', "overrides": {"matmul": "tiled", "splitK": 2}}]


def test_bench_matmul_chained_products_are_one_graph_of_that_many_steps():
    """--chain N: N quantized matrix-vector products in a row as one graph (N steps, in profiling
    mode one timestamped step each), bytes and flops counted for all of them; non-square sizes have none."""
    from tools.bench_matmul import bench, chained_cases

    chained = chained_cases([64, (64, 128)], 3)
    assert [c["name"] for c in chained] == ["int8 GEMV 64x64 x3 chained", "uint4 GEMV 64x64 x3 chained"]
    assert [c["weightBytes"] for c in chained] == [3 * 64 * 64, 3 * 64 * 32]
    result = outside_event_loop(bench, chained[1:], ["auto"], reps=1, batch=1, timeout_s=120, profile=True)
    (row,) = result["rows"]
    assert not row.get("error") and len(row["steps"]) == 3
    assert all(st["kernel"].startswith("matmul_q") for st in row["steps"]), [st["kernel"] for st in row["steps"]]
