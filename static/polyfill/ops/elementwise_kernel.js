/**
 * The one generic element-wise kernel behind the table-driven families (ops/elementwise.js,
 * ops/activations.js, ops/cast.js): one invocation per output element reads each input at its
 * broadcast offset, evaluates a WGSL expression and stores through storeExpr (so float16 rounds
 * to binary16, int8/uint8 wrap).
 *
 * Expressions are chosen per *kind* of the input data type, since the compute layout has five
 * element representations (gpu/types.js):
 *   f   float32, float16 (f32)      i   int32, int8 (i32, int8 sign-extended)
 *   u   uint32, uint8 (u32)         i64 / u64   int64 / uint64 (vec2<u32>(lo, hi))
 * Helpers the expression calls (gpu/math.js, gpu/int64.js) are pulled in automatically; scalar
 * operator attributes (alpha, minValue...) travel as uniforms and are read as `p_<name>()` in the
 * input's compute type.
 */
import {elementCount} from '../dtypes.js';
import {broadcastStrides} from '../shape/common.js';
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {MATH} from '../gpu/math.js';
import {INT64} from '../gpu/int64.js';
import {collectHelpers, helpersUsedIn} from '../gpu/wgsl_lib.js';
import {addEpilogue} from './epilogue.js';

/** Every helper an element-wise expression may call. */
export const LIBRARY = Object.freeze({...MATH, ...INT64});

const KINDS = {float32: 'f', float16: 'f', int32: 'i', int8: 'i', uint32: 'u', uint8: 'u', int64: 'i64', uint64: 'u64', int4: 'i', uint4: 'u'};

/** Expression kind of an MLOperandDataType: 'f' | 'i' | 'u' | 'i64' | 'u64'. */
export function kindOf(dataType) {
  return KINDS[dataType];
}

/**
 * Uniform words of an attribute value (already cast to `dataType` by the builder method).
 * @param {number|bigint} value
 * @returns {{kind: string, length: number, words: number|number[]}}
 */
function attrUniform(value, dataType) {
  const kind = kindOf(dataType);
  if (kind === 'i64' || kind === 'u64') {
    const v = BigInt.asUintN(64, BigInt(value));
    return {kind: 'u32', length: 2, words: [Number(v & 0xffffffffn), Number(v >> 32n)]};
  }
  if (kind === 'f') return {kind: 'f32', length: 0, words: Number(value)};
  return {kind: kind === 'i' ? 'i32' : 'u32', length: 0, words: Number(value)};
}

/**
 * Emits one element-wise step.
 * @param {import('../compile/lowering.js').Lowering} L
 * @param {object} node the builder node; inputs/outputs carry shape and dataType
 * @param {object} spec
 * @param {string} spec.expr WGSL expression of the output element (compute type of the output,
 *   or a bool when spec.bool), over variables named spec.vars
 * @param {string[]} spec.vars names given to the inputs' elements, in node.inputs order
 * @param {boolean} [spec.bool] the expression is a bool stored as 0/1 (uint8 outputs)
 * @param {Record<string, {value: number|bigint, dataType: string}>} [spec.attrs] uniforms p_<name>()
 * @param {string} [spec.name] shader name (defaults to node.op)
 */
export function emitElementwise(L, node, spec) {
  const out = node.outputs[0];
  const outShape = out.shape;
  const total = elementCount(outShape);
  const shader = new Shader(spec.name ?? node.op);
  const uniforms = {};
  const loads = [];
  node.inputs.forEach((input, k) => {
    const v = spec.vars[k];
    const buf = v.toUpperCase() + '_';
    shader.read(buf, wgslType(input.dataType));
    const count = elementCount(input.shape);
    let index;
    if (count === total) index = 'gi';
    else if (count === 1) index = '0u';
    else {
      declareIndexer(shader, `i${k}`, outShape.length);
      uniforms[`i${k}_shape`] = outShape;
      uniforms[`i${k}_strides`] = broadcastStrides(input.shape, outShape);
      index = `i${k}_offset(gi)`;
    }
    loads.push(`  let ${v} = ${buf}[${index}];`);
  });
  shader.write('Y', wgslType(out.dataType));
  const accessors = [];
  for (const [name, {value, dataType}] of Object.entries(spec.attrs ?? {})) {
    const u = attrUniform(value, dataType);
    shader.uniform(name, u.kind, u.length);
    uniforms[name] = u.words;
    const T = wgslType(dataType);
    accessors.push(u.length === 2
      ? `fn p_${name}() -> ${T} { return vec2<u32>(u_${name}(0u), u_${name}(1u)); }`
      : `fn p_${name}() -> ${T} { return u_${name}(); }`);
  }
  let value = spec.bool ? `select(0u, 1u, ${spec.expr})` : spec.expr;
  shader.fn(storeHelpers(out.dataType));
  if (accessors.length) shader.fn(accessors.join('\n'));
  const values = [...node.inputs.map((x) => L.value(x)), L.result(node)];
  if (!spec.bool && kindOf(out.dataType) === 'f') {
    // float results go through the epilogue of the stages fused into this step (ops/epilogue.js)
    const ep = addEpilogue(shader, L, node, {uses: spec.expr, library: LIBRARY});
    values.push(...ep.values);
    Object.assign(uniforms, ep.uniforms);
    value = `epilogue(${value}, gi)`;
  } else {
    shader.fn(collectHelpers(LIBRARY, helpersUsedIn(LIBRARY, spec.expr)));
  }
  shader.main(`${loads.join('\n')}\n  Y[gi] = ${storeExpr(out.dataType, value)};`);
  L.step({shader, values, uniforms, threads: total, label: node.label});
}
