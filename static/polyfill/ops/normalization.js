/**
 * Normalizations (spec §batchNormalization, §instanceNormalization, §layerNormalization).
 *
 * batchNormalization is element-wise with per-channel mean/variance/scale/bias:
 *   y = scale[c] * ((x - mean[c]) / sqrt(variance[c] + epsilon)) + bias[c].
 * instance and layer normalization compute mean and variance per row (rows.js: the dimensions
 * not normalised over), two-pass (mean, then the mean of squared deviations), and apply
 *   y = scale * ((x - mean) / sqrt(variance + epsilon)) + bias
 * with scale/bias addressed through strides: per row (instance: the channel) or per element
 * (layer: the normalised dimensions, in the order of `axes`). The square root is gpu/math.js's
 * sqrt_f (correctly rounded); NaN or ±Inf in a row make its mean, and so the whole row, NaN, as in
 * the float64 definition.
 */
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {FLOAT_TYPES, elementCount} from '../dtypes.js';
import {stridesOf} from '../shape/common.js';
import {optionsDict} from '../shape/reduce.js';
import {batchNormalizationAttrs, instanceNormalizationAttrs, layerNormalizationAttrs} from '../shape/normalization.js';
import {addMathHelpers} from '../gpu/math.js';
import {addWorkgroupReduce, declareRowIndexers, rowWorkgroupSize, splitRows, useShortRows} from './rows.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';
import {addSplitRead} from './matmul_kernels.js';
import {addEpilogue} from './epilogue.js';
import {formulaOf} from './norm_formula.js';

/** Optional operands of options (scale, bias): their slots, or null. */
function optional(builder, options, name, label) {
  return options[name] === undefined ? null : operandOf(builder, options[name], label, name);
}

function batchNormalization(builder, label, input, mean, variance, options) {
  const opts = optionsDict(options, label);
  const s = {
    input: operandOf(builder, input, label), mean: operandOf(builder, mean, label, 'mean'),
    variance: operandOf(builder, variance, label, 'variance'),
    scale: optional(builder, opts, 'scale', label), bias: optional(builder, opts, 'bias', label),
  };
  const attrs = batchNormalizationAttrs(s, opts, label);
  attrs.hasScale = Boolean(s.scale);
  attrs.hasBias = Boolean(s.bias);
  const inputs = [input, mean, variance, ...(s.scale ? [opts.scale] : []), ...(s.bias ? [opts.bias] : [])];
  return addNode(builder, 'batchNormalization', inputs, attrs, [{dataType: s.input.dataType, shape: s.input.shape}], label)[0];
}

function lowerBatchNormalization(node, L) {
  const {axis, epsilon, hasScale, hasBias} = node.attrs;
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const shape = node.inputs[0].shape;
  const shader = new Shader('batchNormalization').read('X', T).read('MEAN', T).read('VAR', T);
  if (hasScale) shader.read('SCALE', T);
  if (hasBias) shader.read('BIAS', T);
  shader.write('Y', T).uniform('C').uniform('inner').uniform('eps', 'f32').fn(storeHelpers(dt));
  shader.main(`  let c = (gi / u_inner()) % u_C();
  var y = (X[gi] - MEAN[c]) / sqrt_f(VAR[c] + u_eps());
${hasScale ? '  y = SCALE[c] * y;\n' : ''}${hasBias ? '  y = y + BIAS[c];\n' : ''}  Y[gi] = ${storeExpr(dt, 'y')};`);
  addMathHelpers(shader);
  L.step({
    shader,
    values: [...node.inputs.map((x) => L.value(x)), L.result(node)],
    uniforms: {C: shape[axis], inner: elementCount(shape.slice(axis + 1)), eps: epsilon},
    threads: elementCount(shape),
    label: node.label,
  });
}

/**
 * Row elements a workgroup keeps in workgroup memory (8 KiB) when it normalises the rows of a
 * split product, so the partial sums are added once per element rather than in each of the
 * three passes; longer rows, and one invocation per row, add them again in each pass.
 */
const STAGED_ROW = 2048;

/**
 * Emits mean/variance normalisation of `input` over `axes` into the node's output. When the
 * input is a split product's result whose reduce step was deferred (compile/split_norm.js), the
 * step reads it as that product's partial sums, added and finished exactly as the reduce step
 * would (ops/matmul_kernels.js addSplitRead), and there is no reduce step.
 * @param {number[]} paramStrides per input dimension, the element stride of scale/bias (0 where
 *   they do not vary)
 */
function lowerRowNormalization(node, L, axes, paramStrides) {
  const {epsilon, hasScale} = node.attrs;
  const input = node.inputs[0];
  const split = splitRows(input.shape, axes, [paramStrides]);
  const x = L.value(input);
  const read = L.splitRead(x);
  const y = L.result(node);
  // a one-row RMS norm its readers may compute themselves (compile/norm_prologue.js): its step
  // only when a reader binds its result
  if (node.attrs.prologue && !read && split.rows === 1) {
    const operators = L.operators;
    L.deferNormRead(y, {x, scale: hasScale ? L.value(node.inputs[1]) : null, epsilon, formula: node.attrs.formula,
      dataType: node.outputs[0].dataType,
      n: split.n, operators, emit: () => L.within(operators, () => rowStep(node, L, split, x, null, y))});
    return;
  }
  rowStep(node, L, split, x, read, y);
}

/** lowerRowNormalization's step: of `x`, or of the split product `read` (L.splitRead), into `y`. */
function rowStep(node, L, split, x, read, y) {
  const {epsilon, hasScale, hasBias} = node.attrs;
  const dt = node.outputs[0].dataType;
  const T = wgslType(dt);
  const short = useShortRows(L.ctx, split.rows, split.n);
  const size = short ? 1 : rowWorkgroupSize(split.n, split.rows);
  // `keep`: other steps read the product's result too; this step stores it (XOUT) as it adds it
  // up, so it takes the deferred read over (no reduce step is emitted for x later)
  const keep = Boolean(read?.keep);
  if (keep) L.takeSplitRead(x);
  const staged = Boolean(read) && !short && split.n <= STAGED_ROW;
  const shader = new Shader(`${node.op}${short ? '_short' : ''}${read ? '_split' : ''}${keep ? '_keep' : ''}`);
  if (read) addSplitRead(shader, read);
  else shader.read('X', T);
  if (hasScale) shader.read('SCALE', T);
  if (hasBias) shader.read('BIAS', T);
  shader.write('Y', T).uniform('rows').uniform('n').uniform('eps', 'f32');
  if (keep) shader.write('XOUT', T);
  let uniforms = {rows: split.rows, n: split.n, eps: epsilon,
    ...declareRowIndexers(shader, split, 0, 'r', 'e'), ...declareRowIndexers(shader, split, 1, 'pr', 'pe')};
  shader.fn(storeHelpers(dt));
  const values = [...(read ? read.values : [x]), ...node.inputs.slice(1).map((v) => L.value(v)), y,
    ...(keep ? [x] : [])];
  if (read) {
    // the product's fused stages, after this step's own bindings; the step is the product's too
    const ep = addEpilogue(shader, L, read.node);
    values.push(...ep.values);
    uniforms = {...uniforms, ...read.uniforms, ...ep.uniforms};
    if (staged) shader.shared('xrow', `array<f32, ${STAGED_ROW}>`);
  }
  // the step is the product's too: its operators first
  const operators = read ? [...read.operators, ...L.operators] : undefined;
  const load = (o) => (read ? `split_x(${o})` : `X[${o}]`);
  // staged: each invocation reads back only the elements j it wrote (no barrier needed)
  const store = keep ? ` XOUT[base + e_offset(j)] = ${storeExpr(dt, 'x')};` : '';
  const first = staged ? `let x = split_x(base + e_offset(j)); xrow[j] = x; s += x;${store}`
    : keep ? `let x = split_x(base + e_offset(j)); s += x;${store}` : `s += ${load('base + e_offset(j)')};`;
  const again = (o) => (staged ? 'xrow[j]' : load(o));
  const row = short ? 'gi' : 'wg';
  const loop = (body) => `for (var j = ${short ? '0u' : 'li'}; j < u_n(); j += ${size}u) { ${body} }`;
  const total = (v) => (short ? '' : `  ${v} = wg_sum(${v}, li);\n`);
  const param = (name) => `${name}[pbase + pe_offset(j)]`;
  const f = formulaOf(shader, node.attrs.formula, dt);
  const body = `  let base = r_offset(${row});
  let pbase = pr_offset(${row});
  let n = f32(u_n());
  var s = 0.0;
  ${loop(first)}
${total('s')}  let mean = ${f.mean('s')};
  var v = 0.0;
  ${loop(`let d = ${f.dev(again('base + e_offset(j)'))}; v += ${f.square('d')};`)}
${total('v')}  let sd = ${f.sd('v')};
  ${loop(`let o = base + e_offset(j);
    var y = ${f.norm(f.dev(again('o')))};
${hasScale ? `    y = ${f.scale(param('SCALE'))};\n` : ''}${hasBias ? `    y = ${f.bias(param('BIAS'))};\n` : ''}    Y[o] = ${storeExpr(dt, 'y')};`)}`;
  if (short) {
    shader.main(body);
    addMathHelpers(shader);
    L.step({shader, values, uniforms, threads: split.rows, label: node.label, operators});
    return;
  }
  addWorkgroupReduce(shader, 'wg_sum', 'f32', 'a + b', size);
  shader.main(`  if (wg >= u_rows()) { return; }\n${body}`, {workgroupSize: size, guard: false});
  addMathHelpers(shader);
  L.step({shader, values, uniforms, groups: split.rows, label: node.label, operators});
}

/**
 * MLGraphBuilder.instanceNormalization / layerNormalization(input, options) for the op `op`: the
 * optional scale and bias operands, then `attrsOf` (shape/normalization.js) checks the slots and
 * options and gives the attributes.
 * @returns {function(builder, label, input, options): MLOperand}
 */
function scaleBiasMethod(op, attrsOf) {
  return function normalization(builder, label, input, options) {
    const opts = optionsDict(options, label);
    const s = {input: operandOf(builder, input, label), scale: optional(builder, opts, 'scale', label), bias: optional(builder, opts, 'bias', label)};
    const attrs = attrsOf(s, opts, label);
    attrs.hasScale = Boolean(s.scale);
    attrs.hasBias = Boolean(s.bias);
    const inputs = [input, ...(s.scale ? [opts.scale] : []), ...(s.bias ? [opts.bias] : [])];
    return addNode(builder, op, inputs, attrs, [{dataType: s.input.dataType, shape: s.input.shape}], label)[0];
  };
}

const instanceNormalization = scaleBiasMethod('instanceNormalization', instanceNormalizationAttrs);

function lowerInstanceNormalization(node, L) {
  const axis = node.attrs.axis;
  const axes = node.attrs.layout === 'nchw' ? [2, 3] : [1, 2];
  lowerRowNormalization(node, L, axes, [0, 1, 2, 3].map((d) => (d === axis ? 1 : 0)));
}

const layerNormalization = scaleBiasMethod('layerNormalization', layerNormalizationAttrs);

function lowerLayerNormalization(node, L) {
  const {axes} = node.attrs;
  const shape = node.inputs[0].shape;
  const pStrides = stridesOf(axes.map((a) => shape[a]));
  lowerRowNormalization(node, L, axes, shape.map((_, d) => (axes.includes(d) ? pStrides[axes.indexOf(d)] : 0)));
}

const F = () => tensorLimits(FLOAT_TYPES, rankRange());
const V = () => tensorLimits(FLOAT_TYPES, rankRange(1, 1));

/** Operator table entries (see ops/index.js). */
export const operators = {
  batchNormalization: {
    optionsIndex: 3,
    method: batchNormalization,
    lower: lowerBatchNormalization,
    limits: () => ({input: tensorLimits(FLOAT_TYPES, rankRange(1)), mean: V(), variance: V(), scale: V(), bias: V(), output: tensorLimits(FLOAT_TYPES, rankRange(1))}),
  },
  instanceNormalization: {
    optionsIndex: 1,
    method: instanceNormalization,
    lower: lowerInstanceNormalization,
    limits: () => ({input: tensorLimits(FLOAT_TYPES, rankRange(4, 4)), scale: V(), bias: V(), output: tensorLimits(FLOAT_TYPES, rankRange(4, 4))}),
  },
  layerNormalization: {
    optionsIndex: 1,
    method: layerNormalization,
    lower: lowerLayerNormalization,
    limits: () => ({input: F(), scale: F(), bias: F(), output: F()}),
  },
};
