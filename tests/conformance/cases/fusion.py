"""Conformance cases for chains that build() fuses into one GPU step (compile/fusion.js,
ops/epilogue.js) and for near misses it must leave alone.

A fused step must compute what the operators compute one by one, float16 rounding of every
intermediate included, so the float64 reference rounds each operator's result to the data type
before the next operator reads it. Convolution and matrix data are dyadic (multiples of 1/8 and
1/16), so the products and sums are exact and the bound is the stages' own (tolerances.md), with
the product's ULP bound on top as a margin. The other operand of a binary stage carries NaN,
+Inf and -Inf.

Patterns: conv2d (general, depthwise, pointwise; nchw and nhwc) -> clamp / relu / sigmoid /
leakyRelu / hardSwish, -> add (residual, bias-like per channel, scalar) -> clamp, -> sub with the
chain value second; convTranspose2d -> elu; gemm -> add -> tanh; matmul (batched) -> add -> gelu;
element-wise chains (add -> relu, mul -> add, the encoder's GELU div -> erf -> add -> mul -> mul,
linear -> hardSigmoid -> softplus -> softsign); chains whose value is read again by a later stage
(``diamond/``: matmul -> add bias -> the encoder's GELU, whose last but one mul reads the biased
value again; conv2d -> relu -> add(conv, relu); gemm -> mul(g, g)); and unfused: the intermediate
read by two branches that do not rejoin, the intermediate a graph output.

The transformer patterns built on these chains (strided views, fused attention, sibling
products) are tests/conformance/cases/transformer.py's.
"""
from __future__ import annotations

import numpy as np

from tests.conformance.encode import operand, tensor, to_type
from tests.conformance.family_helpers import describe
from tests.conformance.encode import graph_case
from tests.reference.conv import convTranspose2d
from tests.reference.elementwise import TOLERANCE, binary, unary
from tests.reference.normalization import layerNormalization
from tests.reference.ops import conv2d, gemm, matmul, reshape, softmax, transpose
from tests.reference.reduce import reduce

SEED = 20261202
NP = {"float32": np.float32, "float16": np.float16}
BINARY = ("add", "sub", "mul", "div", "max", "min", "pow")


def dyadic(rng, shape, scale=8):
    """Multiples of 1/scale in [-1, 1] (exact in float16 and float32)."""
    return rng.integers(-scale, scale + 1, shape) / scale


def specials(values, put=(np.nan, np.inf, -np.inf)):
    """``values`` with NaN, +Inf and -Inf (or ``put``) at three spread positions."""
    out = np.array(values, np.float64)
    flat = out.reshape(-1)
    n = flat.size
    flat[[1 % n, n // 2, n - 2]] = put
    return out


def _round(values, data_type):
    return to_type(values, data_type).astype(np.float64)


def _stage(op, args, options, data_type):
    """float64 value of one element-wise operator on already-rounded operands."""
    if op in BINARY:
        return binary(op, args[0], args[1], data_type)
    return unary(op, args[0], data_type, options)


def _producer(op, args, options, data_type):
    if op == "conv2d":
        return conv2d(args[0], args[1], options)
    if op == "convTranspose2d":
        return convTranspose2d(args[0], args[1], options)
    if op == "gemm":
        return gemm(args[0], args[1], options, data_type)
    if op == "matmul":
        return matmul(args[0], args[1])
    if op == "transpose":
        return transpose(args[0], options)
    if op == "reshape":
        return reshape(args[0], args[1])
    if op == "softmax":
        return softmax(args[0], args[1])
    if op == "layerNormalization":
        return layerNormalization(args[0], options, data_type)
    if op.startswith("reduce"):
        return reduce(op, args[0], options)
    return _stage(op, args, options, data_type)


def _evaluate(operators, env, data_type):
    """Runs the description's operators in float64, rounding every result to data_type."""
    env = dict(env)
    resolve = lambda v: env[v["operand"]] if isinstance(v, dict) and "operand" in v else v  # noqa: E731
    for op in operators:
        args = [resolve(a) for a in op["args"]]
        options = {k: resolve(v) for k, v in (op.get("options") or {}).items()}
        env[op["outputs"]] = _round(_producer(op["op"], args, options, data_type), data_type)
    return env


def _op(op, args, out, **options):
    entry = {"op": op, "args": [operand(a) if isinstance(a, str) else a for a in args], "outputs": out}
    if options:
        entry["options"] = {k: operand(v) if k in ("bias", "c", "scale") else v for k, v in options.items()}
    return entry


def chain_case(tag, data_type, arrays, inputs, operators, outputs, metric, value):
    """A graph case of several operators: ``arrays`` (float64) by name, the names in ``inputs``
    are graph inputs, the rest constants; expected values from :func:`_evaluate`."""
    typed = {n: to_type(a, data_type) for n, a in arrays.items()}
    env = _evaluate(operators, {n: a.astype(np.float64) for n, a in typed.items()}, data_type)
    graph = {
        "inputs": {n: describe(typed[n]) for n in inputs},
        "constants": {n: tensor(a, data_type) for n, a in typed.items() if n not in inputs},
        "operators": operators,
        "outputs": list(outputs),
    }
    return graph_case(f"fusion/{data_type}/{tag}", operators[0]["op"], data_type, graph,
                      {n: tensor(typed[n], data_type) for n in inputs},
                      {n: tensor(env[n], data_type) for n in outputs}, metric, value)


def _ulp(data_type, *ops, base=0):
    """Sum of the ULP bounds of the element-wise ops in data_type, plus ``base``."""
    k = 1 if data_type == "float32" else 2
    return base + sum(TOLERANCE[op][k] for op in ops)


def _conv_cases(rng, data_type):
    cases = []
    for layout in ("nchw", "nhwc"):
        def nc(shape):
            return shape if layout == "nchw" else (shape[0], shape[2], shape[3], shape[1])
        # general 3x3 kernel, 5 filters (a partial block of 4), non-square 7x9, padded
        x = dyadic(rng, nc((1, 3, 7, 9)))
        w = dyadic(rng, (5, 3, 3, 3), 16)
        b = dyadic(rng, (5,), 4)
        y_shape = nc((1, 5, 7, 9))
        conv = dict(padding=[1, 1, 1, 1], inputLayout=layout, bias="b")
        arrays = {"x": x, "w": w, "b": b, "r": specials(dyadic(rng, y_shape) * 4)}
        cases.append(chain_case(f"{layout}/conv2d-clamp", data_type, arrays, ["x"], [
            _op("conv2d", ["x", "w"], "c", **conv),
            _op("clamp", ["c"], "y", minValue=0, maxValue=6),
        ], ["y"], "ULP", 54))
        cases.append(chain_case(f"{layout}/conv2d-add-residual-clamp", data_type, arrays, ["x", "r"], [
            _op("conv2d", ["x", "w"], "c", **conv),
            _op("add", ["c", "r"], "s"),
            _op("clamp", ["s"], "y", minValue=-1.5, maxValue=2),
        ], ["y"], "ULP", 54))
        cases.append(chain_case(f"{layout}/conv2d-sub-chain-second-leakyRelu", data_type, arrays, ["x", "r"], [
            _op("conv2d", ["x", "w"], "c", **conv),
            _op("sub", ["r", "c"], "s"),
            _op("leakyRelu", ["s"], "y", alpha=0.25),
        ], ["y"], "ULP", _ulp(data_type, "leakyRelu", base=54)))
        # depthwise 3x3 stride 2 (6 channels, groups 6), residual add -> relu
        xd = dyadic(rng, nc((1, 6, 9, 8)))
        wd = dyadic(rng, (6, 1, 3, 3), 16)
        yd = nc((1, 6, 5, 4))
        arrays = {"x": xd, "w": wd, "b": dyadic(rng, (6,), 4), "r": specials(dyadic(rng, yd) * 2)}
        cases.append(chain_case(f"{layout}/depthwise-add-relu", data_type, arrays, ["x", "r"], [
            _op("conv2d", ["x", "w"], "c", padding=[1, 1, 1, 1], strides=[2, 2], groups=6, inputLayout=layout, bias="b"),
            _op("add", ["c", "r"], "s"),
            _op("relu", ["s"], "y"),
        ], ["y"], "ULP", 18))
        # pointwise 1x1: 7 input channels -> 9 output channels over 5x6 positions; the per-channel
        # operand is bias-like (broadcast along every other axis), then sigmoid
        xp = dyadic(rng, nc((2, 7, 5, 6)))
        wp = dyadic(rng, (9, 7, 1, 1), 16)
        channel = (1, 9, 1, 1) if layout == "nchw" else (9,)
        arrays = {"x": xp, "w": wp, "s": specials(dyadic(rng, channel) * 2)}
        cases.append(chain_case(f"{layout}/pointwise-mul-channel-sigmoid", data_type, arrays, ["x", "s"], [
            _op("conv2d", ["x", "w"], "c", inputLayout=layout),
            _op("mul", ["c", "s"], "m"),
            _op("sigmoid", ["m"], "y"),
        ], ["y"], "ULP", _ulp(data_type, "sigmoid", base=14)))
        arrays = {"x": xp, "w": wp, "b": dyadic(rng, (9,), 4), "k": np.array([0.75])}
        cases.append(chain_case(f"{layout}/pointwise-add-scalar-hardSwish", data_type, arrays, ["x"], [
            _op("conv2d", ["x", "w"], "c", inputLayout=layout, bias="b"),
            _op("add", ["k", "c"], "a"),
            _op("hardSwish", ["a"], "y"),
        ], ["y"], "ULP", _ulp(data_type, "hardSwish", base=14)))
    # convTranspose2d 3x3 stride 2 -> elu
    xt = dyadic(rng, (1, 3, 4, 5))
    wt = dyadic(rng, (3, 4, 3, 3), 16)
    cases.append(chain_case("convTranspose2d-elu", data_type, {"x": xt, "w": wt}, ["x"], [
        _op("convTranspose2d", ["x", "w"], "c", strides=[2, 2]),
        _op("elu", ["c"], "y", alpha=0.5),
    ], ["y"], "ULP", _ulp(data_type, "elu", base=54)))
    return cases


def _matrix_cases(rng, data_type):
    cases = []
    a, b = dyadic(rng, (5, 6)), dyadic(rng, (6, 7), 16)
    arrays = {"a": a, "b": b, "c": dyadic(rng, (7,), 4), "r": specials(dyadic(rng, (5, 7)) * 2)}
    cases.append(chain_case("gemm-add-tanh", data_type, arrays, ["a", "r"], [
        _op("gemm", ["a", "b"], "g", c="c", alpha=0.5, beta=2.0),
        _op("add", ["g", "r"], "s"),
        _op("tanh", ["s"], "y"),
    ], ["y"], "ULP", _ulp(data_type, "tanh", base=12)))
    # skinny product (N <= 4: computed transposed) -> max with a residual
    arrays = {"a": dyadic(rng, (9, 5)), "b": dyadic(rng, (5, 3), 16), "r": specials(dyadic(rng, (9, 3)))}
    cases.append(chain_case("gemm-skinny-max", data_type, arrays, ["a", "r"], [
        _op("gemm", ["a", "b"], "g"),
        _op("max", ["g", "r"], "y"),
    ], ["y"], "ULP", 10))
    # gelu(-Inf) is NaN, as the spec's 0.5 * x * (1 + erf(x / sqrt(2))) gives (-Inf * 0)
    arrays = {"a": dyadic(rng, (2, 3, 4)), "b": dyadic(rng, (4, 5), 16),
              "c": specials(dyadic(rng, (5,)), (np.nan, np.inf, -np.inf))}
    cases.append(chain_case("matmul-batched-add-bias-gelu", data_type, arrays, ["a"], [
        _op("matmul", ["a", "b"], "m"),
        _op("add", ["m", "c"], "s"),
        _op("gelu", ["s"], "y"),
    ], ["y"], "ULP", _ulp(data_type, "gelu", base=8)))
    return cases


def _elementwise_cases(rng, data_type):
    cases = []
    shape = (3, 5, 7)
    arrays = {"x": specials(dyadic(rng, shape) * 4), "z": dyadic(rng, (5, 1)) * 2}
    cases.append(chain_case("add-broadcast-relu", data_type, arrays, ["x", "z"], [
        _op("add", ["x", "z"], "s"),
        _op("relu", ["s"], "y"),
    ], ["y"], "ULP", 1))
    arrays = {"x": dyadic(rng, shape) * 4, "g": dyadic(rng, (7,)), "r": specials(dyadic(rng, shape))}
    cases.append(chain_case("mul-add", data_type, arrays, ["x", "r"], [
        _op("mul", ["x", "g"], "m"),
        _op("add", ["m", "r"], "y"),
    ], ["y"], "ULP", 2))
    # the encoder's GELU: x * 0.5 * (1 + erf(x / sqrt(2)))
    arrays = {"x": specials(rng.uniform(-3, 3, (4, 6))), "sqrt2": np.array([np.sqrt(2)]),
              "one": np.array([1.0]), "half": np.array([0.5])}
    atol = 2 ** -9 if data_type == "float32" else 2 ** -5
    cases.append(chain_case("gelu-div-erf-add-mul-mul", data_type, arrays, ["x"], [
        _op("div", ["x", "sqrt2"], "d"),
        _op("erf", ["d"], "e"),
        _op("add", ["e", "one"], "p"),
        _op("mul", ["x", "p"], "q"),
        _op("mul", ["q", "half"], "y"),
    ], ["y"], "ATOL", atol))
    arrays = {"x": specials(dyadic(rng, (6, 5)) * 8)}
    cases.append(chain_case("linear-hardSigmoid-softplus-softsign", data_type, arrays, ["x"], [
        _op("linear", ["x"], "l", alpha=0.75, beta=-0.5),
        _op("hardSigmoid", ["l"], "h", alpha=0.3, beta=0.25),
        _op("softplus", ["h"], "p"),
        _op("softsign", ["p"], "y"),
    ], ["y"], "ULP", _ulp(data_type, "linear", "hardSigmoid", "softplus", "softsign")))
    return cases


def _unfused_cases(rng, data_type):
    """Chains whose intermediate must stay a tensor of its own."""
    x = dyadic(rng, (1, 2, 5, 6))
    w = dyadic(rng, (3, 2, 3, 3), 16)
    arrays = {"x": x, "w": w}
    conv = dict(padding=[1, 1, 1, 1])
    return [
        chain_case("unfused/intermediate-read-twice", data_type, arrays, ["x"], [
            _op("conv2d", ["x", "w"], "c", **conv),
            _op("relu", ["c"], "r"),
            _op("sigmoid", ["c"], "g"),
            _op("add", ["r", "g"], "y"),
        ], ["y"], "ULP", _ulp(data_type, "sigmoid", base=37)),
        chain_case("unfused/intermediate-is-output", data_type, arrays, ["x"], [
            _op("conv2d", ["x", "w"], "c", **conv),
            _op("clamp", ["c"], "y", minValue=-0.5, maxValue=0.5),
        ], ["c", "y"], "ULP", 36),
    ]


def _diamond_cases(rng, data_type):
    """Chains in which a later stage reads an earlier value of the chain again (one step)."""
    arrays = {"a": dyadic(rng, (1, 5, 6)), "w": dyadic(rng, (6, 7), 16),
              "c": specials(dyadic(rng, (7,)) * 8), "sqrt2": np.array([np.sqrt(2)]),
              "one": np.array([1.0]), "half": np.array([0.5])}
    atol = 2 ** -9 if data_type == "float32" else 2 ** -5
    cases = [chain_case("diamond/matmul-bias-gelu-erf", data_type, arrays, ["a"], [
        _op("matmul", ["a", "w"], "m"),
        _op("add", ["m", "c"], "x"),
        _op("div", ["x", "sqrt2"], "d"),
        _op("erf", ["d"], "e"),
        _op("add", ["e", "one"], "p"),
        _op("mul", ["x", "p"], "q"),
        _op("mul", ["q", "half"], "y"),
    ], ["y"], "ATOL", atol)]
    arrays = {"x": specials(dyadic(rng, (1, 2, 5, 6))), "w": dyadic(rng, (3, 2, 3, 3), 16)}
    cases.append(chain_case("diamond/conv2d-relu-add", data_type, arrays, ["x"], [
        _op("conv2d", ["x", "w"], "c", padding=[1, 1, 1, 1]),
        _op("relu", ["c"], "r"),
        _op("add", ["c", "r"], "y"),
    ], ["y"], "ULP", 37))
    arrays = {"a": specials(dyadic(rng, (7, 5))), "b": dyadic(rng, (5, 6), 16)}
    cases.append(chain_case("diamond/gemm-square", data_type, arrays, ["a"], [
        _op("gemm", ["a", "b"], "g"),
        _op("mul", ["g", "g"], "y"),
    ], ["y"], "ULP", 24))
    return cases


def graph_cases() -> list[dict]:
    rng = np.random.default_rng(SEED)
    views = np.random.default_rng([SEED, 1])  # its own stream: the older cases keep their data
    cases = []
    for data_type in ("float32", "float16"):
        cases += _conv_cases(rng, data_type) + _matrix_cases(rng, data_type)
        cases += _elementwise_cases(rng, data_type) + _unfused_cases(rng, data_type)
        cases += _diamond_cases(views, data_type)
    return cases
