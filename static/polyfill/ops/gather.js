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
import {F16_BITS, unpackExpr} from '../gpu/packing.js';
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
 * The three scatter steps, for one scatter or a pair of the same indices (`pairs`: [input,
 * updates, output index] each, as lowerScatterNDSearch takes them): copy the inputs and clear the
 * winners; each update claims its target with atomicMax(update number + 1); each update that won
 * writes its value, into both outputs of a pair (one copy, one claim and one write step for
 * both). The updates are read through their strides (a column range of merged sibling products
 * in place).
 * @param {string} name the claim and write kernels' prefix (the scatter operator)
 * @param {{target: string, uniforms: object, declare: function}} how WGSL computing `off` (the
 *   target element) for update `gi`, the uniforms it reads and a function declaring them on a shader
 */
function lowerScatter(node, L, name, indices, pairs, {target, uniforms, declare}) {
  const T = wordType(pairs[0][0].dataType);
  const count = elementCount(pairs[0][0].shape);
  const updateCount = elementCount(pairs[0][1].shape);
  const suffix = pairs.length > 1 ? '_pair' : '';
  // float16 graph inputs scattered into graph outputs (a q4f16 LLM's KV cache in a prefill): the
  // winners cleared, claimed, then one step a word takes each element's winning update or its
  // input's value, read and written in the tensor layout (as lowerScatterNDSearch does)
  const packed = pairs.every(([input, , out]) => L.packsBoundary(input, node.outputs[out]));
  const outs = pairs.map(([, , out]) => L.result(node, out));
  const winners = L.temp(count * 4, `${node.label}: winners`);
  const copy = new Shader(`scatter_${packed ? 'clear' : `init${suffix}`}`);
  if (!packed) {
    pairs.forEach((_, p) => copy.read(`X${p}`, T));
    pairs.forEach((_, p) => copy.write(`Y${p}`, T));
  }
  copy.atomic('W').main(`${packed ? '' : pairs.map((_, p) => `  Y${p}[gi] = X${p}[gi];`).join('\n')}\n  atomicStore(&W[gi], 0u);`);
  L.step({shader: copy, values: [...(packed ? [] : [...pairs.map(([input]) => L.value(input)), ...outs]), winners],
    threads: count, label: `${node.label}: ${packed ? 'clear' : 'copy'}`});
  const I = L.value(indices);
  const indexed = (shader) => declare(shader).fn(indexHelper(indices.dataType));
  const claim = indexed(new Shader(`${name}_claim`).read('I', wgslType(indices.dataType)).atomic('W'))
    .main(`${target}\n  atomicMax(&W[off], gi + 1u);`);
  L.step({shader: claim, values: [I, winners], uniforms, threads: updateCount, label: `${node.label}: claim`});
  if (packed) {
    scatterPackedFinish(node, L, pairs, winners, outs, count);
    return;
  }
  const views = pairs.map(([, updates]) => L.view(updates));
  const write = new Shader(`${name}_write${suffix}`).read('I', wgslType(indices.dataType));
  pairs.forEach((_, p) => write.read(`U${p}`, T));
  write.read('W', 'u32');
  pairs.forEach((_, p) => write.write(`Y${p}`, T));
  indexed(write);
  const writeUniforms = {...uniforms};
  pairs.forEach(([, updates], p) => {
    write.uniform(`u${p}_base`);
    declareIndexer(write, `u${p}`, updates.shape.length);
    Object.assign(writeUniforms, {[`u${p}_base`]: views[p].offset, [`u${p}_shape`]: updates.shape, [`u${p}_strides`]: views[p].strides});
  });
  write.main(`${target}
  if (W[off] == gi + 1u) {
${pairs.map((_, p) => `    Y${p}[off] = U${p}[u_u${p}_base() + u${p}_offset(gi)];`).join('\n')}
  }`);
  L.step({shader: write, values: [I, ...views.map((v) => v.value), winners, ...outs],
    origins: views.flatMap((v) => v.origins), uniforms: writeUniforms, threads: updateCount, label: `${node.label}: write`});
}

/**
 * WGSL main body of a scatter step that reads float16 inputs X<p> and writes float16 outputs R<p>
 * in the tensor layout, a word (two elements) an invocation, and each element in the compute
 * layout (Y<p>) too: `find` (statements) decides for element e whether an update wins it (`won`,
 * a WGSL condition) and `update(p)` reads that update, else the input's element is kept. Declares
 * what the body needs (F16_BITS, the uniform `count`) on `shader`.
 */
function packedWordsBody(shader, pairs, {find, won, update}) {
  const T = wordType(pairs[0][0].dataType);
  shader.fn(F16_BITS).uniform('count');
  return `${pairs.map((_, p) => `  var w${p} = 0u;`).join('\n')}
  for (var h = 0u; h < 2u; h++) {
    let e = gi * 2u + h;
    if (e < u_count()) {
      ${find}
${pairs.map((_, p) => `      var v${p} = ${unpackExpr('float16', `X${p}`, 'e')};
      if (${won}) { v${p} = bitcast<f32>(${update(p)}); }
      Y${p}[e] = bitcast<${T}>(v${p});
      w${p} |= f32_to_f16_bits(v${p}) << (h * 16u);`).join('\n')}
    }
  }
${pairs.map((_, p) => `  R${p}[gi] = w${p};`).join('\n')}`;
}

/**
 * lowerScatter's last step for float16 tensor-layout inputs and outputs: one invocation a word of
 * the outputs, each of its two elements the update that won it (W: update number + 1) or else the
 * input's element; written in the compute layout (Y, for the graph's readers) and as binary16 (R).
 */
function scatterPackedFinish(node, L, pairs, winners, outs, count) {
  const T = wordType(pairs[0][0].dataType);
  const views = pairs.map(([, updates]) => L.view(updates));
  const shader = new Shader(`scatter_finish${pairs.length > 1 ? '_pair' : ''}_f16`).read('W', 'u32');
  pairs.forEach((_, p) => shader.read(`X${p}`, 'u32'));
  pairs.forEach((_, p) => shader.read(`U${p}`, T));
  pairs.forEach((_, p) => shader.write(`Y${p}`, T));
  pairs.forEach((_, p) => shader.write(`R${p}`, 'u32'));
  const uniforms = {count};
  pairs.forEach(([, updates], p) => {
    shader.uniform(`u${p}_base`);
    declareIndexer(shader, `u${p}`, updates.shape.length);
    Object.assign(uniforms, {[`u${p}_base`]: views[p].offset, [`u${p}_shape`]: updates.shape, [`u${p}_strides`]: views[p].strides});
  });
  shader.main(packedWordsBody(shader, pairs, {find: 'let won = W[e];', won: 'won != 0u',
    update: (p) => `U${p}[u_u${p}_base() + u${p}_offset(won - 1u)]`}));
  L.step({shader, values: [winners, ...pairs.map(([input]) => L.packedInput(input)), ...views.map((v) => v.value), ...outs,
    ...pairs.map(([, , out]) => L.packedOutput(node.outputs[out]))], origins: views.flatMap((v) => v.origins),
  uniforms, threads: Math.ceil(count / 2), label: `${node.label}: write`});
}

function lowerScatterElements(node, L) {
  const {inner, axisSize, indicesAxisSize} = node.attrs;
  const body = `
  let inner = gi % u_inner();
  let outer = gi / u_inner() / u_indices_axis();
  let off = (outer * u_axis_size() + index_at(gi, u_axis_size())) * u_inner() + inner;`;
  const [input, indices, updates] = node.inputs;
  lowerScatter(node, L, 'scatterElements', indices, [[input, updates, 0]], {target: body,
    uniforms: {inner, axis_size: axisSize, indices_axis: indicesAxisSize},
    declare: (sh) => sh.uniform('inner').uniform('axis_size').uniform('indices_axis')});
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
  const count = elementCount(pairs[0][0].shape);
  const updateSlices = elementCount(pairs[0][1].shape) / slice;
  const T = wordType(pairs[0][0].dataType);
  // float16 graph inputs scattered into graph outputs (a q4f16 LLM's KV cache): read and written
  // in their tensor layout, a word (two elements) an invocation, with no conversion steps; the
  // outputs in the compute layout too, for the steps that read them (the attention)
  const packed = pairs.every(([input, , out]) => L.packsBoundary(input, node.outputs[out]));
  // the updates through their strides: a column range of merged sibling products is read in place
  const views = pairs.map(([, updates]) => L.view(updates));
  const shader = new Shader(`${pairs.length > 1 ? 'scatterND_search_pair' : 'scatterND_search'}${packed ? '_f16' : ''}`);
  pairs.forEach((_, p) => shader.read(`X${p}`, packed ? 'u32' : T));
  shader.read('I', wgslType(indices.dataType));
  pairs.forEach((_, p) => shader.read(`U${p}`, T));
  pairs.forEach((_, p) => shader.write(`Y${p}`, T));
  if (packed) pairs.forEach((_, p) => shader.write(`R${p}`, 'u32'));
  shader.uniform('slice').uniform('updates').uniform('dims', 'u32', k).uniform('strides', 'u32', k)
    .fn(indexHelper(indices.dataType));
  pairs.forEach(([, updates], p) => {
    shader.uniform(`u${p}_base`);
    declareIndexer(shader, `u${p}`, updates.shape.length);
  });
  // element e's update slice (src >= 0), found by searching them (the last one targeting it wins)
  shader.fn(`fn source(e: u32) -> i32 {
  let base = e - e % u_slice();
  var src = -1i;
  for (var j = 0u; j < u_updates(); j++) {
    var off = 0u;
    for (var t = 0u; t < ${k}u; t++) {
      off += index_at(j * ${k}u + t, u_dims(t)) * u_strides(t);
    }
    if (off == base) { src = i32(j); }
  }
  return src;
}`);
  const update = (p, e, src) => `U${p}[u_u${p}_base() + u${p}_offset(u32(${src}) * u_slice() + ${e} % u_slice())]`;
  if (packed) {
    shader.main(packedWordsBody(shader, pairs, {find: 'let src = source(e);', won: 'src >= 0', update: (p) => update(p, 'e', 'src')}));
  } else {
    shader.main(`  let src = source(gi);
${pairs.map((_, p) => `  if (src >= 0) { Y${p}[gi] = ${update(p, 'gi', 'src')}; } else { Y${p}[gi] = X${p}[gi]; }`).join('\n')}`);
  }
  const uniforms = {slice, updates: updateSlices, dims, strides, ...(packed ? {count} : {})};
  pairs.forEach(([, updates], p) => Object.assign(uniforms,
    {[`u${p}_base`]: views[p].offset, [`u${p}_shape`]: updates.shape, [`u${p}_strides`]: views[p].strides}));
  const inputs = pairs.map(([input]) => (packed ? L.packedInput(input) : L.value(input)));
  const outputs = pairs.map(([, , out]) => L.result(node, out));
  const raws = packed ? pairs.map(([, , out]) => L.packedOutput(node.outputs[out])) : [];
  L.step({shader, values: [...inputs, L.value(indices), ...views.map((v) => v.value), ...outputs, ...raws],
    origins: views.flatMap((v) => v.origins), uniforms, threads: packed ? Math.ceil(count / 2) : count, label: node.label});
}

/**
 * The steps of scatterND, or of the internal node scatterNDPair (compile/scatter_pairs.js: two
 * scatterNDs of the same indices, a layer's key and value cache updates): the one-step search up
 * to `scatterSearchMax` update slices (a decode step's rows), else the three steps of
 * lowerScatter (a prefill's).
 */
function scatterNDSteps(node, L, indices, pairs) {
  const {k, slice, dims, strides} = node.attrs;
  if (elementCount(pairs[0][1].shape) / slice <= L.ctx.tuning.scatterSearchMax) {
    lowerScatterNDSearch(node, L, indices, pairs);
  } else {
    lowerScatter(node, L, 'scatterND', indices, pairs, {target: ndOffset(k), uniforms: {slice, dims, strides},
      declare: (sh) => sh.uniform('slice').uniform('dims', 'u32', k).uniform('strides', 'u32', k)});
  }
}

function lowerScatterNDPair(node, L) {
  const [x0, x1, indices, u0, u1] = node.inputs;
  scatterNDSteps(node, L, indices, [[x0, u0, 0], [x1, u1, 1]]);
}

function lowerScatterND(node, L) {
  const [input, indices, updates] = node.inputs;
  scatterNDSteps(node, L, indices, [[input, updates, 0]]);
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
