/**
 * cast(input, dataType) (spec §cast) between every pair of MLOperandDataTypes, on the generic
 * element-wise kernel (elementwise_kernel.js).
 *
 * Semantics (the spec's table, and our choices where it says implementation-defined):
 *  - float -> float: nearest (ties to even), overflow to ±Inf, NaN stays NaN.
 *  - integer -> float: nearest, ties to even (exact for int64/uint64 beyond 2^53; we never rely
 *    on the driver's i32 -> f32 rounding, which WGSL leaves open); ±Inf past float16's range.
 *  - integer -> integer: the value when in range, else its lowest N bits (two's complement).
 *  - float -> integer: truncated toward zero when in range. Out of range (implementation-defined):
 *    saturated to the target's range, NaN -> 0 (as the spec's ConvertToInt does for MLNumbers).
 */
import {ALL_TYPES} from '../dtypes.js';
import {enumValue} from '../shape/common.js';
import {emitElementwise, kindOf} from './elementwise_kernel.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

/** WGSL expression converting `x` (compute type of kind `from`) to the compute type of `to`. */
const FROM_FLOAT = {
  float32: 'x', float16: 'x',
  int32: 'f32_to_i32(x)', uint32: 'f32_to_u32(x)',
  int8: 'clamp(f32_to_i32(x), -128, 127)', uint8: 'min(f32_to_u32(x), 255u)',
  int64: 'f32_to_i64(x)', uint64: 'f32_to_u64(x)',
};
const FROM_I32 = {
  float32: 'i32_to_f32(x)', float16: 'i32_to_f32(x)',
  int32: 'x', int8: 'x', uint32: 'bitcast<u32>(x)', uint8: 'bitcast<u32>(x)',
  int64: 'i64_from_i32(x)', uint64: 'i64_from_i32(x)',
};
const FROM_U32 = {
  float32: 'u32_to_f32(x)', float16: 'u32_to_f32(x)',
  int32: 'bitcast<i32>(x)', int8: 'bitcast<i32>(x)', uint32: 'x', uint8: 'x',
  int64: 'u64_from_u32(x)', uint64: 'u64_from_u32(x)',
};
const from64 = (toFloat) => ({
  float32: toFloat, float16: toFloat,
  int32: 'bitcast<i32>(x.x)', int8: 'bitcast<i32>(x.x)', uint32: 'x.x', uint8: 'x.x',
  int64: 'x', uint64: 'x',
});
export const CAST = {f: FROM_FLOAT, i: FROM_I32, u: FROM_U32, i64: from64('i64_to_f32(x)'), u64: from64('u64_to_f32(x)')};

/** Spec cast() steps: any input type, any target type; the output copies the input's shape. */
function castMethod(builder, label, input, dataType) {
  const s = operandOf(builder, input, label);
  const type = enumValue(dataType, ALL_TYPES, undefined, label, 'dataType');
  return addNode(builder, 'cast', [input], {dataType: type}, [{dataType: type, shape: s.shape.slice()}], label)[0];
}

function lowerCast(node, L) {
  const from = node.inputs[0].dataType;
  const to = node.attrs.dataType;
  emitElementwise(L, node, {expr: CAST[kindOf(from)][to], vars: ['x'], name: `cast_${from}_${to}`});
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  cast: {
    optionsIndex: 2,
    method: castMethod,
    lower: lowerCast,
    limits: () => ({input: tensorLimits(ALL_TYPES, rankRange()), output: tensorLimits(ALL_TYPES, rankRange())}),
  },
};
