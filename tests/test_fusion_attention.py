"""Fused attention (compile/attention.js): matmul -> scale [-> mask] -> softmax -> matmul as one
step where the pattern allows (forced here through tuning.attention; the default on
hardware adapters), where it must not be fused, and its values against float64 NumPy on the edge
cases (masks of -Inf, NaN/±Inf, 1000 keys, a folded grid). Split from test_fusion.py, whose
step-list helper it uses.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.cases import fusion as fusion_cases
from tests.conformance.cases import transformer as transformer_cases
from tests.conformance.family_helpers import assert_all_pass, run_cases
from tests.graph_runner import open_harness
from tests.test_fusion import _case_steps

# the tests only run JS on the harness and leave nothing on the page that a later test relies on: one page
pytestmark = pytest.mark.shared_page


def test_attention_is_one_step(webnn_page, server_url):
    """Fused (the default on hardware adapters; here, on SwiftShader, through the context's
    tuning.attention), matmul -> scale [-> mask] -> softmax -> matmul is one step listing
    all its operators (the views around it included); with the softmax also a graph output, or a
    head size over the kernel's 64, it stays three. Unfused (the default on software adapters)
    it is three steps. Q, K and V projections (matmul + bias of one A) are one product whose
    column ranges the attention step reads in place; sibling products that are graph outputs are
    copied out. The same build computes the values of all the attention and sibling cases (masks
    with -Inf entries and rows, +Inf, NaN; float32 and float16; broadcast V; 300-key rows) through
    the fused step against float64 NumPy (test_conformance runs them unfused, the default)."""
    cases = [c for c in transformer_cases.graph_cases() if "/attention/" in c["name"] or "/siblings/" in c["name"]]
    f32 = {c["name"].split("/", 2)[-1]: c for c in cases if c["dataType"] == "float32"}
    default = _case_steps(webnn_page, server_url, [f32["attention/div-mask-softmax"]])
    assert default[f32["attention/div-mask-softmax"]["name"]] == [["matmul", "div", "add"], ["softmax"], ["matmul"]], default
    results = run_cases(webnn_page, server_url, cases, {"attention": True}, steps=True)
    steps = {r["name"]: r["steps"] for r in results}
    got = {name.split("/", 1)[-1]: steps[c["name"]] for name, c in f32.items()}
    assert got["div-mask-softmax"] == [["matmul", "div", "add", "softmax", "matmul"]], got
    assert got["bert-views"] == [["matmul", "div", "softmax", "matmul", "transpose",
                                  "transpose", "transpose", "transpose"]], got
    assert got["mul-broadcast-v"] == [["matmul", "mul", "softmax", "matmul"]], got
    assert got["long-rows"] == [["matmul", "softmax", "matmul"]], got
    for name in ("bert-head-64", "odd-heads"):
        assert got[name] == [["matmul", "mul", "add", "softmax", "matmul"]], got
    assert got["head-80-unfused"] == [["matmul", "mul", "add"], ["softmax"], ["matmul"]], got
    assert got["unfused/softmax-is-output"] == [["matmul"], ["softmax"], ["matmul"]], got
    assert got["qkv-attention"] == [["matmul", "add", "reshape"] * 3,
                                    ["matmul", "div", "softmax", "matmul", "transpose"] + ["transpose"] * 3], got
    assert got["outputs-no-bias"] == [["matmul", "matmul"], ["matmul"], ["matmul"]], got
    assert_all_pass(results)


def _scores_sibling_cases():
    """Attention whose scores product has constant keys (Q @ K, K a weight) next to another
    product of Q with a constant B (a sibling candidate), before and after it in build order."""
    rng = np.random.default_rng([fusion_cases.SEED, 31])
    arrays = {"q": rng.uniform(-1, 1, (2, 5, 4)), "k": rng.uniform(-1, 1, (4, 7)),
              "w": fusion_cases.dyadic(rng, (4, 6), 16), "v": rng.uniform(-1, 1, (2, 7, 3))}
    attention = [fusion_cases._op("matmul", ["q", "k"], "s"), fusion_cases._op("softmax", ["s", 2], "p"),
                 fusion_cases._op("matmul", ["p", "v"], "y")]
    other = [fusion_cases._op("matmul", ["q", "w"], "z")]
    return {name: fusion_cases.chain_case(f"attention/scores-sibling-{name}", "float32", arrays, ["q", "v"], ops,
                                          ["y", "z"], "ATOL", 2 ** -16)
            for name, ops in (("first", attention + other), ("last", other + attention))}


def test_fused_scores_product_is_no_sibling(webnn_page, server_url):
    """The fused attention step computes its scores product itself: that product must not also
    join a sibling group (one product of Q with [K | W] computing the scores a second time, and a
    copy of the other product's column range out of it). The other product is one step of its own;
    values against float64 NumPy, fused and unfused."""
    cases = _scores_sibling_cases()
    steps = _case_steps(webnn_page, server_url, list(cases.values()), {"attention": True})
    got = {name: steps[c["name"]] for name, c in cases.items()}
    assert got["first"] == [["matmul", "softmax", "matmul"], ["matmul"]], got
    assert got["last"] == [["matmul"], ["matmul", "softmax", "matmul"]], got
    for attention in (True, False):
        assert_all_pass(run_cases(webnn_page, server_url, list(cases.values()), {"attention": attention}))


def _reshaped_scores_cases():
    """matmul [-> div] -> reshape -> softmax -> matmul where the reshape changes the rows the
    softmax normalises ([2, 5, 8] scores as [2, 10, 4]): not the attention pattern."""
    rng = np.random.default_rng([fusion_cases.SEED, 32])
    arrays = {"q": rng.uniform(-1, 1, (2, 5, 3)), "k": rng.uniform(-1, 1, (2, 3, 8)),
              "v": rng.uniform(-1, 1, (2, 4, 3)), "two": np.array([2.0])}
    op = fusion_cases._op
    cases = {}
    for name, stages in (("reshape", []), ("div-reshape", [op("div", ["s", "two"], "d")])):
        ops = [op("matmul", ["q", "k"], "s"), *stages, op("reshape", [stages[-1]["outputs"] if stages else "s",
                                                                       [2, 10, 4]], "r"),
               op("softmax", ["r", 2], "p"), op("matmul", ["p", "v"], "y")]
        cases[name] = fusion_cases.chain_case(f"attention/unfused/scores-{name}-rows", "float32", arrays,
                                              ["q", "k", "v"], ops, ["y"], "ATOL", 2 ** -16)
    return cases


def test_reshaped_scores_are_not_fused_attention(webnn_page, server_url):
    """A reshape in the scores' fused chain that regroups their rows (rows of 8 scores
    normalised as rows of 4) leaves the attention unfused (the fused kernel takes its rows from
    the first matmul's shape, and got the wrong values); values against float64 NumPy."""
    cases = _reshaped_scores_cases()
    results = run_cases(webnn_page, server_url, list(cases.values()), {"attention": True}, steps=True)
    got = {name: next(r["steps"] for r in results if r["name"] == c["name"]) for name, c in cases.items()}
    assert got["reshape"] == [["matmul", "reshape"], ["softmax"], ["matmul"]], got
    assert got["div-reshape"] == [["matmul", "div", "reshape"], ["softmax"], ["matmul"]], got
    assert_all_pass(results)


def _attention_edge_cases():
    """Fused-attention shapes and values the conformance family leaves out: 1 x 1 x 1 heads;
    D = Dv = 64 with 33 and 1000 keys (the first 40 masked: a whole tile of -Inf first); no
    batch dimensions, and 3 of them broadcast between Q, K and V; masks per row, per column,
    a scalar one, and a bias add after the mask; Kt as transpose(K); scores near 1e30; NaN in
    Q and K, NaN and +Inf in V; 301 heads, one workgroup each, in a grid folded in 3-D on a
    device reporting 16 workgroups a dimension (test_fused_attention_edge_values: [16, 10, 2],
    19 workgroups past the last head, which must store nothing); the context stored through a
    transpose mixing batch and row axes."""
    rng = np.random.default_rng([fusion_cases.SEED, 33])
    op = fusion_cases._op

    def u(*shape):
        return rng.uniform(-1, 1, shape)

    def case(name, q, k, v, stages=(), extra=None, pre=(), post=(), kt="k"):
        ops = [*pre, op("matmul", ["q", kt], "s")]
        cur = "s"
        for i, (name_, other) in enumerate(stages):
            ops.append(op(name_, [cur, other], f"t{i}"))
            cur = f"t{i}"
        ops += [op("softmax", [cur, max(q.ndim, k.ndim) - 1], "p"), op("matmul", ["p", "v"], "c" if post else "y"), *post]
        return fusion_cases.chain_case(f"attention/edge-{name}", "float32", {"q": q, "k": k, "v": v, **(extra or {})},
                                       ["q", "k", "v"], ops, ["y"], "ATOL", 2 ** -16)

    mask = np.zeros((1, 1000))
    mask[0, :40] = mask[0, 999] = -np.inf
    q, k, v = u(2, 5, 4), u(2, 4, 40), u(2, 40, 3)
    q[0, 1, 2] = k[1, 0, 35] = v[0, 33, 1] = np.nan
    v[1, 2, 0] = np.inf
    return [
        case("1x1x1", u(1, 1), u(1, 1), u(1, 1)),
        case("d64-s33", u(2, 3, 64), u(2, 64, 33), u(2, 33, 64)),
        case("m40-d24-s70", u(3, 40, 24), u(3, 24, 70), u(3, 70, 40), [("mul", "scale")], {"scale": np.array([0.2])}),
        case("d64-s1000-first-tile-masked", u(2, 5, 64), u(2, 64, 1000), u(2, 1000, 64), [("add", "mask")], {"mask": mask}),
        case("no-batch", u(5, 4), u(4, 7), u(7, 3)),
        case("batch-3-broadcast", u(2, 1, 2, 5, 4), u(3, 1, 4, 7), u(2, 3, 2, 7, 3)),
        case("mask-row", u(2, 5, 4), u(2, 4, 7), u(2, 7, 3), [("add", "mask")], {"mask": u(5, 1) * 3}),
        case("mask-column", u(2, 5, 4), u(2, 4, 7), u(2, 7, 3), [("add", "mask")], {"mask": u(7) * 3}),
        case("mask-scalar-div", u(2, 5, 4), u(2, 4, 7), u(2, 7, 3), [("div", "two"), ("add", "mask")],
             {"two": np.array([2.0]), "mask": np.array(-1.5)}),
        case("mask-then-bias", u(2, 5, 4), u(2, 4, 7), u(2, 7, 3), [("add", "mask"), ("add", "bias")],
             {"mask": u(5, 7), "bias": u(7)}),
        case("kt-transpose", u(2, 5, 4), u(2, 7, 4), u(2, 7, 3), pre=[op("transpose", ["k"], "kt", permutation=[0, 2, 1])],
             kt="kt"),
        case("scores-1e30", u(2, 5, 4) * 1e15, u(2, 4, 7) * 1e15, u(2, 7, 3)),
        case("nan-inf", q, k, v),
        case("301-heads-folded", u(301, 1, 2), u(301, 2, 3), u(301, 3, 2)),
        case("store-transposed", u(2, 3, 5, 4), u(2, 3, 4, 7), u(2, 3, 7, 6),
             post=[op("transpose", ["c"], "y", permutation=[2, 0, 1, 3])]),
    ]


#: workgroups per grid dimension the edge cases' device reports (graph_batch.TUNE_CONTEXT_JS):
#: 301 heads fold the grid in 3-D, as 70,000 did at the real limit of 65,535 in a 2-D grid (25-50 s
#: of SwiftShader, where 301 take well under one)
EDGE_WORKGROUP_LIMIT = 16


def test_fused_attention_edge_values(webnn_page, server_url):
    """_attention_edge_cases through the fused step (one step each) against float64 NumPy, on a
    device reporting EDGE_WORKGROUP_LIMIT workgroups a grid dimension: the 301 heads' grid is
    folded in 3-D with workgroups past the last head, the other cases' grids fit (or fold in 2-D)."""
    results = run_cases(webnn_page, server_url, _attention_edge_cases(), {"attention": True}, steps=True,
                        workgroup_limit=EDGE_WORKGROUP_LIMIT)
    assert all(sum("softmax" in st for st in r["steps"]) == 1 and len(r["steps"]) == 1 for r in results), results
    folded = next(r for r in results if r["name"].endswith("/edge-301-heads-folded"))
    assert folded["grids"] == [[16, 10, 2]], folded["grids"]
    assert_all_pass(results)


#: kernel configurations (ops/attention.js chooseAttentionConfig) besides the default 16 rows x
#: 8 invocations x 32 keys: more invocations a row (2 and 1 scores each), fewer rows (a tile of Q
#: smaller than the workgroup: the guarded load), 64-key tiles, one row a workgroup; one that
#: does not fit WebGPU's default 16 KB of workgroup memory is the last (the harness's device
#: has the adapter's limit)
CONFIGS = [{"rows": 8, "perRow": 16, "keys": 32}, {"rows": 4, "perRow": 32, "keys": 32},
           {"rows": 8, "perRow": 32, "keys": 32}, {"rows": 1, "perRow": 16, "keys": 16},
           {"rows": 8, "perRow": 16, "keys": 64}]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['rows']}x{c['perRow']}x{c['keys']}")
def test_fused_attention_configs(webnn_page, server_url, config):
    """The fused step in each kernel configuration of CONFIGS (tuning.attentionConfig)
    on the edge cases with masks of -Inf (a whole first tile), NaN/±Inf, 33 and 1000 keys, head
    sizes 1 to 64, 40 rows of 70 keys, broadcast batches and a transposed store: one step each,
    of the configuration's workgroup size and grid, values against float64 NumPy."""
    keep = ("1x1x1", "d64-s33", "m40-d24-s70", "d64-s1000-first-tile-masked", "batch-3-broadcast", "mask-row",
            "nan-inf", "scores-1e30", "store-transposed")
    cases = [c for c in _attention_edge_cases() if c["name"].split("edge-", 1)[1] in keep]
    assert len(cases) == len(keep)
    results = run_cases(webnn_page, server_url, cases, {"attention": True, "attentionConfig": config}, steps=True)
    assert all(len(r["steps"]) == 1 for r in results), results
    # the configuration asked for is the one that ran: 3 heads of 40 rows in blocks of `rows`
    m40 = next(r for r in results if r["name"].endswith("/edge-m40-d24-s70"))
    size = m40["sizes"][0]
    assert (size if isinstance(size, int) else np.prod(size)) == config["rows"] * config["perRow"], m40
    assert np.prod(m40["grids"][0]) == 3 * -(-40 // config["rows"]), m40
    assert_all_pass(results)


_HARDWARE_ATTENTION_JS = """
async (heads) => {
  const {describeGraph} = await import('/polyfill/inspect.js');
  // the plan an NVIDIA H200 gets (the attention fusion and its configuration read the adapter info)
  const context = await navigator.ml.createContext({polyfill: {tuning: {
    adapterInfo: {vendor: 'nvidia', architecture: '', description: '', isFallbackAdapter: false}}}});
  const out = {};
  try {
    for (const d of heads) {
      const b = new MLGraphBuilder(context);
      const q = b.input('q', {dataType: 'float32', shape: [3, 40, d]});
      const k = b.input('k', {dataType: 'float32', shape: [3, d, 50]});
      const v = b.input('v', {dataType: 'float32', shape: [3, 50, d]});
      const graph = await b.build({y: b.matmul(b.softmax(b.matmul(q, k), 2), v)});
      out[d] = describeGraph(graph).steps.map((s) => [s.kernel, s.workgroupSize, s.workgroups]);
      graph.destroy();
    }
  } finally {
    context.destroy();
  }
  return out;
}
"""


def test_attention_config_on_a_hardware_adapter(webnn_page, server_url):
    """On a hardware adapter (its adapter info given to a SwiftShader context) attention is one
    step, in blocks of 4 query rows with 32 invocations a row for head sizes of 32 or more (3
    heads of 40 rows: 30 workgroups) and in the default blocks of 16 rows with 8 a row below
    that (9 workgroups); test_ort_webnn_ep's hardware-plan test runs the wide one's values."""
    open_harness(webnn_page, server_url)
    got = webnn_page.evaluate(_HARDWARE_ATTENTION_JS, [64, 32, 16])
    flat = {d: [(kernel, size if isinstance(size, int) else int(np.prod(size)), int(np.prod(grid))) for kernel, size, grid in steps]
            for d, steps in got.items()}
    assert flat == {"64": [("attention", 128, 30)], "32": [("attention", 128, 30)], "16": [("attention", 128, 9)]}, got
