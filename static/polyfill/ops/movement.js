/**
 * Data-movement operators (spec §reshape, §transpose, §concat, §identity, §slice, §split,
 * §expand, §tile, §reverse, §pad): type-agnostic, they move 32-bit words in the compute layout (one
 * word per element, two for int64/uint64), so every MLOperandDataType works with the same kernels.
 *
 * reshape and identity alias their input (no copy). transpose is deferred as a strided view
 * (compile/views.js): the matrix kernels read it through strides; any other consumer gets one
 * strided copy, made where it is first needed (a reshape or identity of a deferred view stays a
 * view when its strides allow). Every other operator is one strided copy
 * (shape/movement.js simplifyStrided): Y[i] = X[offset(i)] (gather form), or
 * Y[offset(i)] = X[i] (scatter form, for concat, one step per input); pad has its own kernel.
 */
import {typeError} from '../errors.js';
import {ALL_TYPES, DATA_TYPES, elementCount} from '../dtypes.js';
import {Shader} from '../gpu/wgsl.js';
import {castNumber} from '../shape/cast.js';
import {checkUnsigned, stridesOf} from '../shape/common.js';
import {
  PADDING_MODES, concatPlan, concatShape, expandPlan, expandShape, padPlan, padShape, reshapeShape, reversePlan,
  reverseAxes, slicePlan, sliceParams, splitSizes, simplifyStrided, tilePlan, tileShape, transposePermutation,
} from '../shape/movement.js';
import {tensorLimits, rankRange} from './limits.js';
import {reshapeStrides} from '../shape/strides.js';
import {addNode, operandOf} from '../builder_state.js';

/** WGSL element type that moves one element of `dataType` in the compute layout. */
export function wordType(dataType) {
  return DATA_TYPES[dataType].words === 2 ? 'vec2<u32>' : 'u32';
}

/** Options dictionary: undefined/null -> {}, anything but an object is a TypeError. */
export function dictionary(options, label) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw typeError(label, 'options must be a dictionary');
  return options;
}

/**
 * Emits one strided copy step (see simplifyStrided for `plan`).
 * @param {object} L Lowering
 * @param {object} src Value read
 * @param {object} dst Value written
 * @param {string} dataType element type (only its word count matters)
 * @param {{shape: number[], stride: number[], mod: number[], base: number}} plan
 * @param {boolean} scatter false: Y[i] = X[offset(i)]; true: Y[offset(i)] = X[i]
 * @param {string} label
 */
export function stridedCopy(L, src, dst, dataType, plan, scatter, label) {
  const T = wordType(dataType);
  const rank = plan.shape.length;
  const shader = new Shader(scatter ? 'scatter_copy' : 'strided_copy').read('X', T).write('Y', T).uniform('base');
  const uniforms = {base: plan.base};
  if (rank > 0) {
    shader.uniform('shape', 'u32', rank).uniform('mod', 'u32', rank).uniform('stride', 'u32', rank);
    Object.assign(uniforms, {shape: plan.shape, mod: plan.mod, stride: plan.stride});
  }
  shader.fn(`fn offset_of(i: u32) -> u32 {
  var off = u_base();${rank > 0 ? `
  var rem = i;
  for (var d = ${rank - 1}i; d >= 0; d--) {
    let n = u_shape(u32(d));
    off += ((rem % n) % u_mod(u32(d))) * u_stride(u32(d));
    rem /= n;
  }` : ''}
  return off;
}`);
  shader.main(scatter ? '  Y[offset_of(gi)] = X[gi];' : '  Y[gi] = X[offset_of(gi)];');
  L.step({shader, values: [src, dst], uniforms, threads: elementCount(plan.shape), label});
}

/** A builder method for single-input ops computing {attrs, shape} from (slots, ...args, options). */
function singleInput(op, optionsIndex, infer) {
  return function method(builder, label, input, ...rest) {
    const s = operandOf(builder, input, label);
    rest[optionsIndex - 1] = dictionary(rest[optionsIndex - 1], label);
    const {attrs, shape} = infer(s, label, ...rest);
    return addNode(builder, op, [input], attrs, [{dataType: s.dataType, shape}], label)[0];
  };
}

/** Lowers a single-input op with a strided plan computed from the node. */
function lowerPlan(planOf) {
  return function lower(node, L) {
    const input = node.inputs[0];
    const out = node.outputs[0];
    stridedCopy(L, L.value(input), L.result(node), out.dataType, planOf(input.shape, out.shape, node.attrs), false, node.label);
  };
}

/**
 * Defers `node`'s output as a View over `src`'s data with `strides` for the output's shape; its
 * materialization is one strided copy into the node's own result.
 */
function deferStrided(node, L, src, strides) {
  const out = node.outputs[0];
  const view = {value: src.value, offset: src.offset, shape: out.shape, strides, origins: [...src.origins, node.origin]};
  view.materialize = () => {
    const y = L.result(node);
    stridedCopy(L, src.value, y, out.dataType, simplifyStrided(out.shape, strides, src.offset), false, node.label);
    return y;
  };
  L.defer(out, view);
}

function lowerAlias(node, L) {
  const input = node.inputs[0];
  const src = L.deferredView(input);
  const strides = src && reshapeStrides(src.shape, src.strides, node.outputs[0].shape);
  if (strides) deferStrided(node, L, src, strides);
  else L.alias(node.outputs[0], L.value(input));
}

function lowerTranspose(node, L) {
  const src = L.view(node.inputs[0]);
  deferStrided(node, L, src, node.attrs.permutation.map((p) => src.strides[p]));
}

function concatMethod(builder, label, inputs, axis, options) {
  dictionary(options, label);
  if (inputs === null || typeof inputs !== 'object' || typeof inputs[Symbol.iterator] !== 'function') {
    throw typeError(label, 'inputs must be a sequence of MLOperands');
  }
  const list = [...inputs];
  const slotList = list.map((x, k) => operandOf(builder, x, label, `inputs[${k}]`));
  axis = checkUnsigned(axis, label, 'axis');
  const shape = concatShape(slotList, axis, label);
  return addNode(builder, 'concat', list, {axis}, [{dataType: slotList[0].dataType, shape}], label)[0];
}

function lowerConcat(node, L) {
  const out = L.result(node);
  const outShape = node.outputs[0].shape;
  const {axis} = node.attrs;
  let offset = 0;
  node.inputs.forEach((input, k) => {
    const plan = concatPlan(input.shape, outShape, axis, offset);
    stridedCopy(L, L.value(input), out, input.dataType, plan, true, `${node.label}:${k}`);
    offset += input.shape[axis];
  });
}

function splitMethod(builder, label, input, splits, options) {
  const s = operandOf(builder, input, label);
  const axis = checkUnsigned(dictionary(options, label).axis ?? 0, label, 'axis');
  const sizes = splitSizes(s.shape, splits, axis, label);
  const outs = sizes.map((n) => {
    const shape = s.shape.slice();
    shape[axis] = n;
    return {dataType: s.dataType, shape};
  });
  return addNode(builder, 'split', [input], {axis, sizes}, outs, label);
}

function lowerSplit(node, L) {
  const input = node.inputs[0];
  const x = L.value(input);
  const {axis, sizes} = node.attrs;
  const ones = input.shape.map(() => 1);
  let start = 0;
  sizes.forEach((n, k) => {
    const starts = input.shape.map((_, i) => (i === axis ? start : 0));
    const plan = slicePlan(input.shape, node.outputs[k].shape, starts, ones);
    stridedCopy(L, x, L.result(node, k), input.dataType, plan, false, `${node.label}:${k}`);
    start += n;
  });
}

/**
 * The compute-layout words [lo, hi] of an MLNumber cast to dataType (spec "cast"): f32 bits for
 * float32/float16, two's complement for integers, hi only used by int64/uint64.
 */
export function valueWords(value, dataType) {
  const v = castNumber(value, dataType);
  const view = new DataView(new ArrayBuffer(8));
  switch (DATA_TYPES[dataType].compute) {
    case 'f32': view.setFloat32(0, Number(v), true); break;
    case 'i32': view.setInt32(0, Number(v), true); break;
    case 'u32': view.setUint32(0, Number(v), true); break;
    case 'i64': view.setBigInt64(0, BigInt(v), true); break;
    default: view.setBigUint64(0, BigInt(v), true);
  }
  return [view.getUint32(0, true), view.getUint32(4, true)];
}

function padMethod(builder, label, input, beginningPadding, endingPadding, options) {
  const s = operandOf(builder, input, label);
  const {mode: modeOption = 'constant', value = 0} = dictionary(options, label);
  const {shape, begin, end, mode} = padShape(s.shape, beginningPadding, endingPadding, modeOption, label);
  // WebIDL (bigint or unrestricted double): anything but a bigint goes through ToNumber ('x' -> NaN)
  if (typeof value === 'symbol') throw typeError(label, 'value must be a number or bigint');
  const number = typeof value === 'bigint' ? value : Number(value);
  const attrs = {begin, end, mode, value: valueWords(number, s.dataType)};
  return addNode(builder, 'pad', [input], attrs, [{dataType: s.dataType, shape}], label)[0];
}

/**
 * pad kernel: one invocation per output element walks the dimensions; a coordinate outside the
 * input is either the constant (mode 0) or mapped back inside: edge clamps, reflection mirrors
 * without repeating the edge (x -> -x), symmetric repeats it (x -> -x - 1).
 */
function lowerPad(node, L) {
  const input = node.inputs[0];
  const out = node.outputs[0];
  const {mode, value} = node.attrs;
  const {inShape, outShape, begin} = padPlan(input.shape, node.attrs.begin, node.attrs.end);
  const rank = inShape.length;
  const T = wordType(out.dataType);
  const shader = new Shader('pad').read('X', T).write('Y', T).uniform('mode').uniform('value', 'u32', 2);
  const uniforms = {mode: PADDING_MODES.indexOf(mode), value};
  if (rank > 0) {
    shader.uniform('out_shape', 'u32', rank).uniform('in_shape', 'u32', rank).uniform('in_strides', 'u32', rank).uniform('begin', 'u32', rank);
    Object.assign(uniforms, {out_shape: outShape, in_shape: inShape, in_strides: stridesOf(inShape), begin});
  }
  const fill = T === 'u32' ? 'u_value(0u)' : 'vec2<u32>(u_value(0u), u_value(1u))';
  shader.main(`  var off = 0u;${rank > 0 ? `
  var rem = gi;
  for (var d = ${rank - 1}i; d >= 0; d--) {
    let m = u_out_shape(u32(d));
    let n = i32(u_in_shape(u32(d)));
    var x = i32(rem % m) - i32(u_begin(u32(d)));
    rem /= m;
    if (x < 0 || x >= n) {
      switch u_mode() {
        case 0u: { Y[gi] = ${fill}; return; }
        case 1u: { x = clamp(x, 0, n - 1); }
        case 2u: { x = select((n - 1) - (x - (n - 1)), -x, x < 0); }
        default: { x = select((n - 1) - (x - n), -x - 1, x < 0); }
      }
    }
    off += u32(x) * u_in_strides(u32(d));
  }` : ''}
  Y[gi] = X[off];`);
  L.step({shader, values: [L.value(input), L.result(node)], uniforms, threads: elementCount(out.shape), label: node.label});
}

const ANY = rankRange();
const single = (range = ANY) => () => ({input: tensorLimits(ALL_TYPES, range), output: tensorLimits(ALL_TYPES, range)});

/** Operator table entries (see ops/index.js). */
export const operators = {
  reshape: {
    optionsIndex: 2,
    method: singleInput('reshape', 2, (s, label, newShape) => ({attrs: {}, shape: reshapeShape(s.shape, newShape, label)})),
    lower: lowerAlias,
    limits: single(),
  },
  identity: {
    optionsIndex: 1,
    method: singleInput('identity', 1, (s) => ({attrs: {}, shape: s.shape.slice()})),
    lower: lowerAlias,
    limits: single(),
  },
  transpose: {
    optionsIndex: 1,
    method: singleInput('transpose', 1, (s, label, options) => {
      const permutation = transposePermutation(s.shape.length, options.permutation, label);
      return {attrs: {permutation}, shape: permutation.map((p) => s.shape[p])};
    }),
    lower: lowerTranspose,
    limits: single(),
  },
  concat: {
    optionsIndex: 2,
    method: concatMethod,
    lower: lowerConcat,
    limits: () => ({inputs: tensorLimits(ALL_TYPES, rankRange(1)), output: tensorLimits(ALL_TYPES, rankRange(1))}),
  },
  slice: {
    optionsIndex: 3,
    method: singleInput('slice', 3, (s, label, starts, sizes, options) => {
      const {shape, starts: st, strides} = sliceParams(s.shape, starts, sizes, options.strides, label);
      return {attrs: {starts: st, strides}, shape};
    }),
    lower: lowerPlan((inShape, outShape, attrs) => slicePlan(inShape, outShape, attrs.starts, attrs.strides)),
    limits: single(),
  },
  split: {
    optionsIndex: 2,
    method: splitMethod,
    lower: lowerSplit,
    limits: () => ({input: tensorLimits(ALL_TYPES, rankRange(1)), outputs: tensorLimits(ALL_TYPES, rankRange(1))}),
  },
  expand: {
    optionsIndex: 2,
    method: singleInput('expand', 2, (s, label, newShape) => ({attrs: {}, shape: expandShape(s.shape, newShape, label)})),
    lower: lowerPlan((inShape, outShape) => expandPlan(inShape, outShape)),
    limits: single(),
  },
  tile: {
    optionsIndex: 2,
    method: singleInput('tile', 2, (s, label, repetitions) => ({attrs: {}, shape: tileShape(s.shape, repetitions, label)})),
    lower: lowerPlan((inShape, outShape) => tilePlan(inShape, outShape)),
    limits: single(),
  },
  pad: {
    optionsIndex: 3,
    method: padMethod,
    lower: lowerPad,
    limits: single(),
  },
  reverse: {
    optionsIndex: 1,
    method: singleInput('reverse', 1, (s, label, options) => ({attrs: {axes: reverseAxes(s.shape.length, options.axes, label)}, shape: s.shape.slice()})),
    lower: lowerPlan((inShape, outShape, attrs) => reversePlan(inShape, attrs.axes)),
    limits: single(),
  },
};

/**
 * The internal node sharedValue (compile/cse.js): output i is input i's value (a deferred view
 * stays deferred), no step.
 */
function lowerSharedValue(node, L) {
  node.outputs.forEach((output, i) => {
    const view = L.deferredView(node.inputs[i]);
    if (view) L.defer(output, view);
    else L.alias(output, L.value(node.inputs[i]));
  });
}

/** Internal operator table entries: nodes only compile passes create (no builder method). */
export const internalOperators = {
  sharedValue: {lower: lowerSharedValue},
};
