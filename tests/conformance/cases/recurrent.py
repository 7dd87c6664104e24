"""Conformance cases for gruCell, gru, lstmCell and lstm (spec §gru, §gruCell, §lstm, §lstmCell).

tolerances.md has no row for these; per its rule the bound comes from the operators they
decompose into, per time step: two matrix products (2K ULP each, K = inputSize and hiddenSize),
two bias additions, the gate activations (sigmoid 34 ULP, tanh 16 ULP) and the few
multiply/adds that combine the gates (1 ULP each); LSTM adds the tanh of the cell state. Gate
values are at most 1 in magnitude, so those ULPs are converted to an absolute bound at the
scale of the outputs, max(1, max |expected|), and summed over the steps the state runs through:
    ATOL = steps * (2 (inputSize + hiddenSize) + 60 [+ 16 for LSTM]) * 2^-23 * scale.
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import operand, validation_case
from tests.conformance.family_helpers import op_case
from tests.graph_runner import data_type_of
from tests.reference.recurrent import gru, gruCell, lstm, lstmCell

SEED = 31337
F32 = np.float32


def _bound(steps, input_size, hidden, lstm_op, expected, ulp_of_one=2.0 ** -23):
    scale = max([1.0] + [float(np.nanmax(np.abs(e))) for e in expected])
    per_step = 2 * (input_size + hidden) + 60 + (16 if lstm_op else 0)
    return steps * per_step * ulp_of_one * scale


def _arrays(rng, shapes, dtype=F32):
    return {n: rng.uniform(-0.6, 0.6, s).astype(dtype) for n, s in shapes.items()}


def _case(op, name, args, option_arrays, plain_options, arrays, expected, steps, input_size, hidden, const=()):
    options = dict(plain_options) | {k: operand(k) for k in option_arrays}
    dt = data_type_of(arrays["x"])
    outs = {f"y{i}": (e, dt) for i, e in enumerate(expected)}
    return op_case(f"{op}/{dt}/{name}", op, dt, args, options or None,
                   inputs={k: v for k, v in arrays.items() if k not in const},
                   constants={k: v for k, v in arrays.items() if k in const},
                   expected=outs, metric="ATOL",
                   value=_bound(steps, input_size, hidden, op.startswith("lstm"), expected,
                                2.0 ** -10 if dt == "float16" else 2.0 ** -23))


def gru_cell_case(rng, name, batch, input_size, hidden, opt_names=("bias", "recurrentBias"), dtype=F32, **plain):
    g = 3 * hidden
    arrays = _arrays(rng, {"x": (batch, input_size), "w": (g, input_size), "r": (g, hidden), "h": (batch, hidden)}
                     | {n: (g,) for n in opt_names}, dtype)
    ref_opts = dict(plain) | {n: arrays[n] for n in opt_names}
    expected = [gruCell(arrays["x"], arrays["w"], arrays["r"], arrays["h"], hidden, ref_opts)]
    args = [operand("x"), operand("w"), operand("r"), operand("h"), hidden]
    return _case("gruCell", name, args, opt_names, plain, arrays, expected, 1, input_size, hidden, const=("w", "r"))


def lstm_cell_case(rng, name, batch, input_size, hidden, opt_names=("bias", "recurrentBias"), dtype=F32, **plain):
    g = 4 * hidden
    shapes = {"x": (batch, input_size), "w": (g, input_size), "r": (g, hidden), "h": (batch, hidden), "c": (batch, hidden)}
    shapes |= {n: ((3 * hidden,) if n == "peepholeWeight" else (g,)) for n in opt_names}
    arrays = _arrays(rng, shapes, dtype)
    ref_opts = dict(plain) | {n: arrays[n] for n in opt_names}
    expected = list(lstmCell(arrays["x"], arrays["w"], arrays["r"], arrays["h"], arrays["c"], hidden, ref_opts))
    args = [operand("x"), operand("w"), operand("r"), operand("h"), operand("c"), hidden]
    return _case("lstmCell", name, args, opt_names, plain, arrays, expected, 1, input_size, hidden, const=("w",))


def sequence_case(rng, op, name, steps, batch, input_size, hidden, opt_names=("bias", "recurrentBias"), dtype=F32, **plain):
    gates = 3 if op == "gru" else 4
    dirs = 2 if plain.get("direction") == "both" else 1
    g = gates * hidden
    shapes = {"x": (steps, batch, input_size), "w": (dirs, g, input_size), "r": (dirs, g, hidden)}
    for n in opt_names:
        shapes[n] = {"bias": (dirs, g), "recurrentBias": (dirs, g), "peepholeWeight": (dirs, 3 * hidden),
                     "initialHiddenState": (dirs, batch, hidden), "initialCellState": (dirs, batch, hidden)}[n]
    arrays = _arrays(rng, shapes, dtype)
    ref_opts = dict(plain) | {n: arrays[n] for n in opt_names}
    fn = gru if op == "gru" else lstm
    expected = fn(arrays["x"], arrays["w"], arrays["r"], steps, hidden, ref_opts)
    args = [operand("x"), operand("w"), operand("r"), steps, hidden]
    return _case(op, name, args, opt_names, plain, arrays, expected, steps, input_size, hidden, const=("w", "r"))


def graph_cases() -> list[dict]:
    """Recurrent graph cases (deterministic)."""
    rng = np.random.default_rng(SEED)
    cases = [
        gru_cell_case(rng, "default", 2, 3, 4),
        gru_cell_case(rng, "no-biases", 3, 5, 4, ()),
        gru_cell_case(rng, "bias-only", 1, 3, 5, ("bias",)),
        gru_cell_case(rng, "recurrentBias-only", 2, 2, 3, ("recurrentBias",)),
        gru_cell_case(rng, "layout-rzn", 2, 3, 4, layout="rzn"),
        gru_cell_case(rng, "resetAfter-false", 2, 3, 4, resetAfter=False),
        gru_cell_case(rng, "resetAfter-false-rzn", 3, 4, 5, layout="rzn", resetAfter=False),
        gru_cell_case(rng, "activations-relu-tanh", 2, 3, 4, activations=["relu", "tanh"]),
        gru_cell_case(rng, "activations-tanh-sigmoid", 2, 3, 4, activations=["tanh", "sigmoid"]),
        gru_cell_case(rng, "larger", 5, 40, 33),
        lstm_cell_case(rng, "default", 2, 3, 4),
        lstm_cell_case(rng, "no-biases", 3, 5, 4, ()),
        lstm_cell_case(rng, "peephole", 2, 3, 4, ("bias", "recurrentBias", "peepholeWeight")),
        lstm_cell_case(rng, "peephole-only", 1, 3, 5, ("peepholeWeight",)),
        lstm_cell_case(rng, "layout-ifgo", 2, 3, 4, ("bias", "peepholeWeight"), layout="ifgo"),
        lstm_cell_case(rng, "activations-relu-sigmoid-tanh", 2, 3, 4, activations=["relu", "sigmoid", "tanh"]),
        lstm_cell_case(rng, "activations-sigmoid-relu-relu", 2, 3, 4, activations=["sigmoid", "relu", "relu"]),
        lstm_cell_case(rng, "larger", 5, 40, 33, ("bias", "recurrentBias", "peepholeWeight")),
    ]
    all_gru = ("bias", "recurrentBias", "initialHiddenState")
    for direction in ("forward", "backward", "both"):
        for seq in (False, True):
            cases.append(sequence_case(rng, "gru", f"{direction}-seq{int(seq)}", 3, 2, 3, 4, all_gru,
                                       direction=direction, returnSequence=seq))
    cases += [
        sequence_case(rng, "gru", "defaults", 4, 2, 3, 5, ()),
        sequence_case(rng, "gru", "one-step", 1, 3, 2, 4, all_gru, returnSequence=True),
        sequence_case(rng, "gru", "rzn-resetAfter-false-both", 3, 2, 4, 3, all_gru, layout="rzn", resetAfter=False,
                      direction="both", returnSequence=True),
        sequence_case(rng, "gru", "activations-relu-tanh", 3, 1, 3, 4, ("bias",), activations=["relu", "tanh"]),
        sequence_case(rng, "gru", "long", 12, 3, 10, 16, all_gru, direction="both", returnSequence=True),
    ]
    all_lstm = ("bias", "recurrentBias", "peepholeWeight", "initialHiddenState", "initialCellState")
    for direction in ("forward", "backward", "both"):
        for seq in (False, True):
            cases.append(sequence_case(rng, "lstm", f"{direction}-seq{int(seq)}", 3, 2, 3, 4, all_lstm,
                                       direction=direction, returnSequence=seq))
    cases += [
        sequence_case(rng, "lstm", "defaults", 4, 2, 3, 5, ()),
        sequence_case(rng, "lstm", "hidden-state-only", 2, 2, 3, 4, ("initialHiddenState",)),
        sequence_case(rng, "lstm", "cell-state-only", 2, 2, 3, 4, ("initialCellState", "bias")),
        sequence_case(rng, "lstm", "ifgo-both", 3, 2, 4, 3, all_lstm, layout="ifgo", direction="both", returnSequence=True),
        sequence_case(rng, "lstm", "activations", 3, 1, 3, 4, ("bias",), activations=["sigmoid", "relu", "tanh"]),
        sequence_case(rng, "lstm", "long", 12, 3, 10, 16, all_lstm, direction="both", returnSequence=True),
    ]
    f16 = np.float16
    cases += [
        gru_cell_case(rng, "default", 2, 3, 4, dtype=f16),
        lstm_cell_case(rng, "peephole", 2, 3, 4, ("bias", "recurrentBias", "peepholeWeight"), dtype=f16),
        sequence_case(rng, "gru", "both-seq1", 3, 2, 3, 4, all_gru, dtype=f16, direction="both", returnSequence=True),
        sequence_case(rng, "lstm", "both-seq1", 3, 2, 3, 4, all_lstm, dtype=f16, direction="both", returnSequence=True),
    ]
    return cases


def _in(name, shape):
    return f"builder.input('{name}', {{dataType: 'float32', shape: {list(shape)}}})"


def validation_cases() -> list[dict]:
    """Inputs the spec refuses: a TypeError naming the label."""
    gc = lambda x, w, r, h, hidden=4, opts="": (  # noqa: E731
        f"(builder) => builder.gruCell({_in('x', x)}, {_in('w', w)}, {_in('r', r)}, {_in('h', h)}, {hidden}, {{label: 'L'{opts}}})")
    g = lambda x, w, r, steps=3, hidden=4, opts="": (  # noqa: E731
        f"(builder) => builder.gru({_in('x', x)}, {_in('w', w)}, {_in('r', r)}, {steps}, {hidden}, {{label: 'L'{opts}}})")
    lc = lambda x, w, r, h, c, hidden=4, opts="": (  # noqa: E731
        f"(builder) => builder.lstmCell({_in('x', x)}, {_in('w', w)}, {_in('r', r)}, {_in('h', h)}, {_in('c', c)}, {hidden}, {{label: 'L'{opts}}})")
    ls = lambda x, w, r, steps=3, hidden=4, opts="": (  # noqa: E731
        f"(builder) => builder.lstm({_in('x', x)}, {_in('w', w)}, {_in('r', r)}, {steps}, {hidden}, {{label: 'L'{opts}}})")
    bad = {
        "gruCell/validation/weight-shape": gc([2, 3], [11, 3], [12, 4], [2, 4]),
        "gruCell/validation/hidden-state-shape": gc([2, 3], [12, 3], [12, 4], [3, 4]),
        "gruCell/validation/bias-shape": gc([2, 3], [12, 3], [12, 4], [2, 4], opts=f", bias: {_in('b', [1, 12])}"),
        "gruCell/validation/activations-count": gc([2, 3], [12, 3], [12, 4], [2, 4], opts=", activations: ['sigmoid']"),
        "gruCell/validation/bad-activation": gc([2, 3], [12, 3], [12, 4], [2, 4], opts=", activations: ['sigmoid', 'gelu']"),
        "gruCell/validation/bad-layout": gc([2, 3], [12, 3], [12, 4], [2, 4], opts=", layout: 'nzr'"),
        "gruCell/validation/input-rank": gc([1, 2, 3], [12, 3], [12, 4], [2, 4]),
        "gru/validation/steps-mismatch": g([3, 2, 3], [1, 12, 3], [1, 12, 4], steps=2),
        "gru/validation/steps-zero": g([3, 2, 3], [1, 12, 3], [1, 12, 4], steps=0),
        "gru/validation/both-needs-two-directions": g([3, 2, 3], [1, 12, 3], [1, 12, 4], opts=", direction: 'both'"),
        "gru/validation/bad-direction": g([3, 2, 3], [1, 12, 3], [1, 12, 4], opts=", direction: 'sideways'"),
        "gru/validation/initial-state-shape": g([3, 2, 3], [1, 12, 3], [1, 12, 4], opts=f", initialHiddenState: {_in('h', [2, 4])}"),
        "gru/validation/recurrent-weight-shape": g([3, 2, 3], [1, 12, 3], [1, 12, 3]),
        "lstmCell/validation/cell-state-shape": lc([2, 3], [16, 3], [16, 4], [2, 4], [2, 5]),
        "lstmCell/validation/peephole-shape": lc([2, 3], [16, 3], [16, 4], [2, 4], [2, 4], opts=f", peepholeWeight: {_in('p', [16])}"),
        "lstmCell/validation/activations-count": lc([2, 3], [16, 3], [16, 4], [2, 4], [2, 4], opts=", activations: ['sigmoid', 'tanh']"),
        "lstm/validation/weight-gates": ls([3, 2, 3], [1, 12, 3], [1, 16, 4]),
        "lstm/validation/steps-zero": ls([3, 2, 3], [1, 16, 3], [1, 16, 4], steps=0),
        "lstm/validation/bad-layout": ls([3, 2, 3], [1, 16, 3], [1, 16, 4], opts=", layout: 'zrn'"),
        "lstm/validation/initial-cell-state-shape": ls([3, 2, 3], [1, 16, 3], [1, 16, 4], opts=f", initialCellState: {_in('c', [1, 2, 5])}"),
        "lstm/validation/int32-input": "(builder) => builder.lstm(builder.input('x', {dataType: 'int32', shape: [3, 2, 3]}), "
                                       f"{_in('w', [1, 16, 3])}, {_in('r', [1, 16, 4])}, 3, 4, {{label: 'L'}})",
    }
    return [validation_case(name, name.split("/")[0], js, "TypeError", "L") for name, js in bad.items()]
