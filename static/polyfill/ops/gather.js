/**
 * gather, gatherElements, gatherND, scatterElements, scatterND (spec §gather ... §scatterND).
 * Type-agnostic like ops/movement.js: data moves as compute-layout words, so every data type
 * works; indices are int32, uint32 or int64 (two words).
 *
 * Index semantics (the spec leaves out-of-range values to clamping, see its notes): an index v
 * into a dimension of size n is clamped to [-n, n-1], then a negative value counts from the end
 * (v + n). Scatter with duplicate targets is deterministic: the update that comes last in
 * row-major order wins (an atomicMax over update numbers picks it, then only it writes; a
 * scatterND of few update slices searches them from each output element instead, one step).
 */
import {ALL_TYPES, elementCount} from '../dtypes.js';
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {wgslType} from '../gpu/types.js';
import {checkUnsigned} from '../shape/common.js';
import {
  INDEX_TYPES, gatherElementsParams, gatherNDParams, gatherParams, scatterElementsParams, scatterNDParams,
} from '../shape/gather.js';
import {dictionary, wordType} from './movement.js';
import {tensorLimits, rankRange} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

/**
 * WGSL `fn index_at(i: u32, n: u32) -> u32`: element i of the indices binding `I`, clamped and
 * made non-negative for a dimension of size n (see the file header).
 */
export function indexHelper(dataType) {
  if (dataType === 'uint32') return 'fn index_at(i: u32, n: u32) -> u32 { return min(I[i], n - 1u); }';
  if (dataType === 'int32') {
    return `fn index_at(i: u32, n: u32) -> u32 {
  let v = I[i];
  if (v < 0) { return u32(max(v + i32(n), 0)); }
  return min(u32(v), n - 1u);
}`;
  }
  return `fn index_at(i: u32, n: u32) -> u32 {
  let w = I[i];
  let hi = bitcast<i32>(w.y);
  if (hi == -1 && w.x >= 0x80000000u) { return u32(max(bitcast<i32>(w.x) + i32(n), 0)); }
  if (hi < 0) { return 0u; }
  if (hi > 0) { return n - 1u; }
  return min(w.x, n - 1u);
}`;
}

/** A shader reading X (data), I (indices) and writing Y, with index_at declared. */
function gatherShader(name, node) {
  const T = wordType(node.outputs[0].dataType);
  const indices = node.inputs[1];
  return new Shader(name).read('X', T).read('I', wgslType(indices.dataType)).write('Y', T).fn(indexHelper(indices.dataType));
}

function lowerGather(node, L) {
  const {inner, axisSize, count} = node.attrs;
  const shader = gatherShader('gather', node).uniform('inner').uniform('axis_size').uniform('count').main(`
  let inner = gi % u_inner();
  let t = gi / u_inner();
  let j = t % u_count();
  let outer = t / u_count();
  Y[gi] = X[(outer * u_axis_size() + index_at(j, u_axis_size())) * u_inner() + inner];`);
  L.step({shader, values: [L.value(node.inputs[0]), L.value(node.inputs[1]), L.result(node)],
    uniforms: {inner, axis_size: axisSize, count}, threads: elementCount(node.outputs[0].shape), label: node.label});
}

function lowerGatherElements(node, L) {
  const {inner, axisSize, indicesAxisSize} = node.attrs;
  const shader = gatherShader('gatherElements', node).uniform('inner').uniform('axis_size').uniform('indices_axis').main(`
  let inner = gi % u_inner();
  let outer = gi / u_inner() / u_indices_axis();
  Y[gi] = X[(outer * u_axis_size() + index_at(gi, u_axis_size())) * u_inner() + inner];`);
  L.step({shader, values: [L.value(node.inputs[0]), L.value(node.inputs[1]), L.result(node)],
    uniforms: {inner, axis_size: axisSize, indices_axis: indicesAxisSize}, threads: elementCount(node.outputs[0].shape), label: node.label});
}

/** WGSL body computing `off`, the element offset of slice element gi of gatherND/scatterND. */
function ndOffset(k) {
  return `
  let r = gi % u_slice();
  let j = gi / u_slice();
  var off = r;
  for (var t = 0u; t < ${k}u; t++) {
    off += index_at(j * ${k}u + t, u_dims(t)) * u_strides(t);
  }`;
}

function lowerGatherND(node, L) {
  const {k, slice, dims, strides} = node.attrs;
  const shader = gatherShader('gatherND', node).uniform('slice').uniform('dims', 'u32', k).uniform('strides', 'u32', k)
    .main(`${ndOffset(k)}\n  Y[gi] = X[off];`);
  L.step({shader, values: [L.value(node.inputs[0]), L.value(node.inputs[1]), L.result(node)],
    uniforms: {slice, dims, strides}, threads: elementCount(node.outputs[0].shape), label: node.label});
}

/**
 * The three scatter steps: copy the input and clear the winners; each update claims its target
 * with atomicMax(update number + 1); each update that won writes its value.
 * @param {string} targetBody WGSL computing `off` (the target element) for update `gi`
 */
function lowerScatter(node, L, targetBody, uniforms, declare) {
  const [input, indices, updates] = node.inputs;
  const T = wordType(input.dataType);
  const count = elementCount(input.shape);
  const updateCount = elementCount(updates.shape);
  const out = L.result(node);
  const winners = L.temp(count * 4, `${node.label}: winners`);
  const copy = new Shader('scatter_init').read('X', T).write('Y', T).atomic('W')
    .main('  Y[gi] = X[gi];\n  atomicStore(&W[gi], 0u);');
  L.step({shader: copy, values: [L.value(input), out, winners], threads: count, label: `${node.label}: copy`});
  const I = L.value(indices);
  const claim = declare(new Shader(`${node.op}_claim`).read('I', wgslType(indices.dataType)).atomic('W').fn(indexHelper(indices.dataType)))
    .main(`${targetBody}\n  atomicMax(&W[off], gi + 1u);`);
  L.step({shader: claim, values: [I, winners], uniforms, threads: updateCount, label: `${node.label}: claim`});
  const write = declare(new Shader(`${node.op}_write`).read('I', wgslType(indices.dataType)).read('U', T).read('W', 'u32').write('Y', T)
    .fn(indexHelper(indices.dataType)))
    .main(`${targetBody}\n  if (W[off] == gi + 1u) { Y[off] = U[gi]; }`);
  L.step({shader: write, values: [I, L.value(updates), winners, out], uniforms, threads: updateCount, label: `${node.label}: write`});
}

function lowerScatterElements(node, L) {
  const {inner, axisSize, indicesAxisSize} = node.attrs;
  const body = `
  let inner = gi % u_inner();
  let outer = gi / u_inner() / u_indices_axis();
  let off = (outer * u_axis_size() + index_at(gi, u_axis_size())) * u_inner() + inner;`;
  lowerScatter(node, L, body, {inner, axis_size: axisSize, indices_axis: indicesAxisSize},
    (s) => s.uniform('inner').uniform('axis_size').uniform('indices_axis'));
}

/**
 * scatterND with few update slices (an LLM's KV cache update: one row a head per decode step) as
 * one step: each output element looks for the last update slice targeting its slice (the rule of
 * lowerScatter: the last in row-major order wins) and takes that element, else the input's.
 * `pairs`: [input, updates, output index] of each scatter the step writes: one, or two of the
 * same indices and shapes (the internal node scatterNDPair, compile/scatter_pairs.js: a layer's
 * key and value cache updates), which share the search.
 */
function lowerScatterNDSearch(node, L, indices, pairs) {
  const {k, slice, dims, strides} = node.attrs;
  const updateSlices = elementCount(pairs[0][1].shape) / slice;
  const T = wordType(pairs[0][0].dataType);
  // the updates through their strides: a column range of merged sibling products is read in place
  const views = pairs.map(([, updates]) => L.view(updates));
  const shader = new Shader(pairs.length > 1 ? 'scatterND_search_pair' : 'scatterND_search');
  pairs.forEach((_, p) => shader.read(`X${p}`, T));
  shader.read('I', wgslType(indices.dataType));
  pairs.forEach((_, p) => shader.read(`U${p}`, T));
  pairs.forEach((_, p) => shader.write(`Y${p}`, T));
  shader.uniform('slice').uniform('updates').uniform('dims', 'u32', k).uniform('strides', 'u32', k)
    .fn(indexHelper(indices.dataType));
  pairs.forEach(([, updates], p) => {
    shader.uniform(`u${p}_base`);
    declareIndexer(shader, `u${p}`, updates.shape.length);
  });
  shader.main(`
  let r = gi % u_slice();
  let base = gi - r;
  var src = -1i;
  for (var j = 0u; j < u_updates(); j++) {
    var off = 0u;
    for (var t = 0u; t < ${k}u; t++) {
      off += index_at(j * ${k}u + t, u_dims(t)) * u_strides(t);
    }
    if (off == base) { src = i32(j); }
  }
${pairs.map((_, p) => `  if (src >= 0) { Y${p}[gi] = U${p}[u_u${p}_base() + u${p}_offset(u32(src) * u_slice() + r)]; } else { Y${p}[gi] = X${p}[gi]; }`).join('\n')}`);
  const uniforms = {slice, updates: updateSlices, dims, strides};
  pairs.forEach(([, updates], p) => Object.assign(uniforms,
    {[`u${p}_base`]: views[p].offset, [`u${p}_shape`]: updates.shape, [`u${p}_strides`]: views[p].strides}));
  L.step({shader, values: [...pairs.map(([input]) => L.value(input)), L.value(indices), ...views.map((v) => v.value),
    ...pairs.map(([, , out]) => L.result(node, out))], origins: views.flatMap((v) => v.origins),
  uniforms, threads: elementCount(pairs[0][0].shape), label: node.label});
}

/**
 * scatterND with many update slices (a prefill's rows of the KV cache) in the three steps of
 * lowerScatter, for one scatter or a pair of the same indices (`pairs` as in
 * lowerScatterNDSearch): the pair's copies are one step, its claims one (the indices are
 * shared), its writes one; the updates are read through their strides.
 */
function lowerScatterNDClaim(node, L, indices, pairs) {
  const {k, slice, dims, strides} = node.attrs;
  const T = wordType(pairs[0][0].dataType);
  const count = elementCount(pairs[0][0].shape);
  const updateCount = elementCount(pairs[0][1].shape);
  const suffix = pairs.length > 1 ? '_pair' : '';
  const outs = pairs.map(([, , out]) => L.result(node, out));
  const winners = L.temp(count * 4, `${node.label}: winners`);
  const copy = new Shader(`scatter_init${suffix}`);
  pairs.forEach((_, p) => copy.read(`X${p}`, T));
  pairs.forEach((_, p) => copy.write(`Y${p}`, T));
  copy.atomic('W').main(`${pairs.map((_, p) => `  Y${p}[gi] = X${p}[gi];`).join('\n')}\n  atomicStore(&W[gi], 0u);`);
  L.step({shader: copy, values: [...pairs.map(([input]) => L.value(input)), ...outs, winners],
    threads: count, label: `${node.label}: copy`});
  const declare = (shader) => shader.uniform('slice').uniform('dims', 'u32', k).uniform('strides', 'u32', k)
    .fn(indexHelper(indices.dataType));
  const I = L.value(indices);
  const claim = declare(new Shader('scatterND_claim').read('I', wgslType(indices.dataType)).atomic('W'))
    .main(`${ndOffset(k)}\n  atomicMax(&W[off], gi + 1u);`);
  L.step({shader: claim, values: [I, winners], uniforms: {slice, dims, strides}, threads: updateCount, label: `${node.label}: claim`});
  const views = pairs.map(([, updates]) => L.view(updates));
  const write = new Shader(`scatterND_write${suffix}`).read('I', wgslType(indices.dataType));
  pairs.forEach((_, p) => write.read(`U${p}`, T));
  write.read('W', 'u32');
  pairs.forEach((_, p) => write.write(`Y${p}`, T));
  declare(write);
  const uniforms = {slice, dims, strides};
  pairs.forEach(([, updates], p) => {
    write.uniform(`u${p}_base`);
    declareIndexer(write, `u${p}`, updates.shape.length);
    Object.assign(uniforms, {[`u${p}_base`]: views[p].offset, [`u${p}_shape`]: updates.shape, [`u${p}_strides`]: views[p].strides});
  });
  write.main(`${ndOffset(k)}
  if (W[off] == gi + 1u) {
${pairs.map((_, p) => `    Y${p}[off] = U${p}[u_u${p}_base() + u${p}_offset(gi)];`).join('\n')}
  }`);
  L.step({shader: write, values: [I, ...views.map((v) => v.value), winners, ...outs],
    origins: views.flatMap((v) => v.origins), uniforms, threads: updateCount, label: `${node.label}: write`});
}

/** The internal node scatterNDPair (compile/scatter_pairs.js): two scatterNDs of the same indices. */
function lowerScatterNDPair(node, L) {
  const [x0, x1, indices, u0, u1] = node.inputs;
  const pairs = [[x0, u0, 0], [x1, u1, 1]];
  if (elementCount(u0.shape) / node.attrs.slice <= L.ctx.tuning.scatterSearchMax) lowerScatterNDSearch(node, L, indices, pairs);
  else lowerScatterNDClaim(node, L, indices, pairs);
}

function lowerScatterND(node, L) {
  const [input, indices, updates] = node.inputs;
  if (elementCount(updates.shape) / node.attrs.slice <= L.ctx.tuning.scatterSearchMax) {
    lowerScatterNDSearch(node, L, indices, [[input, updates, 0]]);
  } else {
    lowerScatterNDClaim(node, L, indices, [[input, updates, 0]]);
  }
}

function gatherMethod(op, params) {
  return function method(builder, label, input, indices, options) {
    const si = operandOf(builder, input, label, 'input');
    const sx = operandOf(builder, indices, label, 'indices');
    const axis = checkUnsigned(dictionary(options, label).axis ?? 0, label, 'axis');
    const p = params(si, sx, axis, label);
    const attrs = {...p, axis, count: elementCount(sx.shape)};
    return addNode(builder, op, [input, indices], attrs, [{dataType: si.dataType, shape: p.shape}], label)[0];
  };
}

function scatterMethod(op, params) {
  return function method(builder, label, input, indices, updates, options) {
    const si = operandOf(builder, input, label, 'input');
    const sx = operandOf(builder, indices, label, 'indices');
    const su = operandOf(builder, updates, label, 'updates');
    const axis = checkUnsigned(dictionary(options, label).axis ?? 0, label, 'axis');
    const attrs = {...params(si, sx, su, axis, label), axis};
    return addNode(builder, op, [input, indices, updates], attrs, [{dataType: si.dataType, shape: si.shape.slice()}], label)[0];
  };
}

const data = (min = 1) => tensorLimits(ALL_TYPES, rankRange(min));
const gatherLimits = (indicesMin) => () => ({input: data(), indices: tensorLimits(INDEX_TYPES, rankRange(indicesMin)), output: data(0)});
const scatterLimits = (updatesMin) => () => ({
  input: data(), indices: tensorLimits(INDEX_TYPES, rankRange(1)), updates: data(updatesMin), output: data(),
});

/** Operator table entries (see ops/index.js). */
export const operators = {
  gather: {optionsIndex: 2, method: gatherMethod('gather', gatherParams), lower: lowerGather, limits: gatherLimits(0)},
  gatherElements: {
    optionsIndex: 2, method: gatherMethod('gatherElements', gatherElementsParams), lower: lowerGatherElements, limits: gatherLimits(1),
  },
  gatherND: {
    optionsIndex: 2, method: gatherMethod('gatherND', (i, x, axis, label) => gatherNDParams(i, x, label)), lower: lowerGatherND, limits: gatherLimits(1),
  },
  scatterElements: {
    optionsIndex: 3, method: scatterMethod('scatterElements', scatterElementsParams), lower: lowerScatterElements, limits: scatterLimits(1),
  },
  scatterND: {
    optionsIndex: 3, method: scatterMethod('scatterND', (i, x, u, axis, label) => scatterNDParams(i, x, u, label)), lower: lowerScatterND, limits: scatterLimits(0),
  },
};

/** Internal operator table entries: nodes only compile passes create (no builder method). */
export const internalOperators = {
  scatterNDPair: {lower: lowerScatterNDPair},
};
