/**
 * The stages of a row normalization as WGSL, shared by its own step (ops/normalization.js) and
 * the packed matrix-vector kernel that normalizes its A itself (ops/quantized_gemv.js).
 */
import {BINARY, UNARY, exprFor} from './elementwise.js';

/**
 * The WGSL of each stage of a row normalization (lowerRowNormalization's `mean`, `d`, `v`, `sd`
 * and `y`): the spec's layer / instance normalization by default (f32 throughout: (x - mean) /
 * sqrt(variance + epsilon), scale * y, y + bias, rounded once at the store), or, for a layer
 * normalization found written out as element-wise operators (compile/layer_norm.js `formula`),
 * each stage as that operator computes it: its ops/elementwise.js expression (div_f, pow_f,
 * sqrt_f, div_f(1.0, x)) and, for float16, its result rounded to binary16 as its own step would
 * store it; with `center` false (an RMS norm) the mean is 0 and d is x itself. The functions
 * `ln_<op>` it needs are added to `shader`.
 * @param {{square: 'pow' | 'mul', reciprocal: boolean, center: boolean} | undefined} formula
 * @returns {{mean, dev, square, sd, norm, scale, bias: function(string...): string}} WGSL
 *   expressions of the given WGSL operands
 */
export function formulaOf(shader, formula, dataType) {
  if (!formula) {
    return {
      mean: (s) => `${s} / n`, dev: (x) => `(${x} - mean)`, square: (d) => `${d} * ${d}`,
      sd: (v) => `sqrt_f(${v} / n + u_eps())`, norm: (d) => `${d} / sd`,
      scale: (g) => `${g} * y`, bias: (b) => `y + ${b}`,
    };
  }
  const round = dataType === 'float16' ? (e) => `f16_round(${e})` : (e) => e;
  const binary = (op) => {
    shader.fn(`fn ln_${op}(a: f32, b: f32) -> f32 { return ${round(exprFor(BINARY[op], dataType))}; }`);
    return (a, b) => `ln_${op}(${a}, ${b})`;
  };
  const unary = (op) => {
    shader.fn(`fn ln_${op}(x: f32) -> f32 { return ${round(exprFor(UNARY[op], dataType))}; }`);
    return (x) => `ln_${op}(${x})`;
  };
  const [sub, add, mul, div, squareRoot] = [binary('sub'), binary('add'), binary('mul'), binary('div'), unary('sqrt')];
  // reduceMean's final `acc / n`, rounded as its store rounds (ops/reduce.js)
  const reduceMean = (s) => round(`${s} / n`);
  const square = formula.square === 'pow' ? binary('pow') : null;
  const reciprocal = formula.reciprocal ? unary('reciprocal') : null;
  return {
    mean: (s) => (formula.center ? reduceMean(s) : '0.0'), dev: (x) => (formula.center ? sub(x, 'mean') : x),
    square: (d) => (square ? square(d, '2.0') : mul(d, d)),
    sd: (v) => squareRoot(add(reduceMean(v), 'u_eps()')),
    norm: (d) => (reciprocal ? mul(d, reciprocal('sd')) : div(d, 'sd')),
    scale: (g) => mul('y', g), bias: (b) => add('y', b),
  };
}
