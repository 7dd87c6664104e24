"""Float64 NumPy references for gruCell, gru, lstmCell and lstm, following the spec's emulation
code (the WebNN spec's sections gru, gruCell, lstm, lstmCell).

Options are dicts keyed by the members of MLGruOptions / MLGruCellOptions / MLLstmOptions /
MLLstmCellOptions (operands as arrays) with the spec's defaults: layout "zrn" / "iofg",
activations (sigmoid, tanh) / (sigmoid, tanh, tanh), resetAfter true, direction "forward".
"""
from __future__ import annotations

import numpy as np

ACTIVATIONS = {
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}

GRU_GATES = {"zrn": "zrn", "rzn": "rzn"}
LSTM_GATES = {"iofg": "iofg", "ifgo": "ifgo"}


def _f64(x):
    return None if x is None else np.asarray(x, dtype=np.float64)


def _rows(t, gate, order, h):
    """The rows of gate `gate` (a letter of `order`) in a tensor whose first axis is gates*h."""
    k = order.index(gate)
    return t[k * h:(k + 1) * h]


def gruCell(x, weight, recurrentWeight, hiddenState, hiddenSize, options=None):
    """One GRU step: z, r = act0(...), n = act1(...), h' = z h + (1 - z) n. Returns [batch, h]."""
    o = options or {}
    h = int(hiddenSize)
    x, w, rw, hs = _f64(x), _f64(weight), _f64(recurrentWeight), _f64(hiddenState)
    order = GRU_GATES[o.get("layout", "zrn")]
    f, g = (ACTIVATIONS[a] for a in o.get("activations", ["sigmoid", "tanh"]))
    zero = np.zeros(h)
    b = _f64(o.get("bias"))
    rb = _f64(o.get("recurrentBias"))
    bias = lambda gate: zero if b is None else _rows(b, gate, order, h)  # noqa: E731
    rbias = lambda gate: zero if rb is None else _rows(rb, gate, order, h)  # noqa: E731
    proj = lambda gate: x @ _rows(w, gate, order, h).T  # noqa: E731
    rproj = lambda gate, state: state @ _rows(rw, gate, order, h).T  # noqa: E731
    with np.errstate(over="ignore"):
        z = f((bias("z") + rbias("z")) + (proj("z") + rproj("z", hs)))
        r = f((bias("r") + rbias("r")) + (proj("r") + rproj("r", hs)))
        if o.get("resetAfter", True):
            n = g(bias("n") + (proj("n") + r * (rbias("n") + rproj("n", hs))))
        else:
            n = g((bias("n") + rbias("n")) + (proj("n") + rproj("n", r * hs)))
    return z * hs + n * (1.0 - z)


def lstmCell(x, weight, recurrentWeight, hiddenState, cellState, hiddenSize, options=None):
    """One LSTM step with peepholes on the previous cell state. Returns (h', c'), each [batch, h]."""
    o = options or {}
    h = int(hiddenSize)
    x, w, rw, hs, cs = _f64(x), _f64(weight), _f64(recurrentWeight), _f64(hiddenState), _f64(cellState)
    order = LSTM_GATES[o.get("layout", "iofg")]
    fa, ga, ha = (ACTIVATIONS[a] for a in o.get("activations", ["sigmoid", "tanh", "tanh"]))
    zero = np.zeros(h)
    b, rb, p = _f64(o.get("bias")), _f64(o.get("recurrentBias")), _f64(o.get("peepholeWeight"))
    bias = lambda gate: zero if b is None else _rows(b, gate, order, h)  # noqa: E731
    rbias = lambda gate: zero if rb is None else _rows(rb, gate, order, h)  # noqa: E731
    peep = lambda gate: zero if p is None else _rows(p, gate, "iof", h)  # noqa: E731
    pre = lambda gate: (bias(gate) + rbias(gate)) + (x @ _rows(w, gate, order, h).T + hs @ _rows(rw, gate, order, h).T)  # noqa: E731
    with np.errstate(over="ignore"):
        i = fa(cs * peep("i") + pre("i"))
        f = fa(cs * peep("f") + pre("f"))
        g = ga(pre("g"))
        out = fa(cs * peep("o") + pre("o"))
        c = f * cs + i * g
        return out * ha(c), c


def _sequence(cell, x, weight, recurrentWeight, steps, hiddenSize, options, lstm):
    o = options or {}
    x = _f64(x)
    _, batch, _ = x.shape
    h = int(hiddenSize)
    direction = o.get("direction", "forward")
    dirs = 2 if direction == "both" else 1
    h0 = _f64(o.get("initialHiddenState"))
    c0 = _f64(o.get("initialCellState"))
    hidden, cells = [], []
    seq = np.zeros((steps, dirs, batch, h))
    cell_opts = {k: v for k, v in o.items() if k in ("resetAfter", "layout", "activations")}
    for d in range(dirs):
        hs = np.zeros((batch, h)) if h0 is None else h0[d]
        cs = np.zeros((batch, h)) if c0 is None else c0[d]
        opts = dict(cell_opts)
        for name in ("bias", "recurrentBias", "peepholeWeight"):
            if o.get(name) is not None:
                opts[name] = _f64(o[name])[d]
        for step in range(steps):
            t = steps - 1 - step if (d == 1 or direction == "backward") else step
            if lstm:
                hs, cs = cell(x[t], _f64(weight)[d], _f64(recurrentWeight)[d], hs, cs, h, opts)
            else:
                hs = cell(x[t], _f64(weight)[d], _f64(recurrentWeight)[d], hs, h, opts)
            seq[t, d] = hs
        hidden.append(hs)
        cells.append(cs)
    out = [np.stack(hidden)]
    if lstm:
        out.append(np.stack(cells))
    if o.get("returnSequence", False):
        out.append(seq)
    return out


def gru(x, weight, recurrentWeight, steps, hiddenSize, options=None):
    """GRU over `steps`: [h_last [dirs, batch, h]] (+ [sequence [steps, dirs, batch, h]])."""
    return _sequence(gruCell, x, weight, recurrentWeight, steps, hiddenSize, options, lstm=False)


def lstm(x, weight, recurrentWeight, steps, hiddenSize, options=None):
    """LSTM over `steps`: [h_last, c_last] (+ [sequence]) as in the spec."""
    return _sequence(lstmCell, x, weight, recurrentWeight, steps, hiddenSize, options, lstm=True)
