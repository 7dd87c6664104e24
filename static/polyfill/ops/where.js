/**
 * where and triangular (spec §where, §triangular): selections that move words without looking
 * at the values' type, so every data type works (zero is the all-zero word for every type).
 */
import {typeError} from '../errors.js';
import {ALL_TYPES, elementCount} from '../dtypes.js';
import {Shader, declareIndexer} from '../gpu/wgsl.js';
import {broadcastShapes, broadcastStrides, checkDataType} from '../shape/common.js';
import {dictionary, wordType} from './movement.js';
import {tensorLimits, rankRange} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

const MIN_LONG = -(2 ** 31);
const MAX_LONG = 2 ** 31 - 1;

function whereMethod(builder, label, condition, trueValue, falseValue, options) {
  dictionary(options, label);
  const sc = operandOf(builder, condition, label, 'condition');
  const st = operandOf(builder, trueValue, label, 'trueValue');
  const sf = operandOf(builder, falseValue, label, 'falseValue');
  checkDataType(sc, ['uint8'], label, 'condition');
  if (sf.dataType !== st.dataType) throw typeError(label, `falseValue data type ${sf.dataType} differs from trueValue's ${st.dataType}`);
  const shape = broadcastShapes(sc.shape, broadcastShapes(st.shape, sf.shape, label), label);
  return addNode(builder, 'where', [condition, trueValue, falseValue], {}, [{dataType: st.dataType, shape}], label)[0];
}

/** Y = select(F, T, C != 0) with each of C, T, F broadcast to the output through strides. */
function lowerWhere(node, L) {
  const shape = node.outputs[0].shape;
  const T = wordType(node.outputs[0].dataType);
  const shader = new Shader('where').read('C', 'u32').read('T', T).read('F', T).write('Y', T);
  const shapes = node.inputs.map((x) => x.shape);
  const uniforms = {};
  if (shapes.every((s) => elementCount(s) === elementCount(shape))) {
    shader.fn(['c', 't', 'f'].map((p) => `fn ${p}_offset(i: u32) -> u32 { return i; }`).join('\n'));
  } else {
    ['c', 't', 'f'].forEach((p, k) => {
      declareIndexer(shader, p, shape.length);
      uniforms[`${p}_shape`] = shape;
      uniforms[`${p}_strides`] = broadcastStrides(shapes[k], shape);
    });
  }
  shader.main('  Y[gi] = select(F[f_offset(gi)], T[t_offset(gi)], C[c_offset(gi)] != 0u);');
  const values = [...node.inputs.map((x) => L.value(x)), L.result(node)];
  L.step({shader, values, uniforms, threads: elementCount(shape), label: node.label});
}

function triangularMethod(builder, label, input, options) {
  const s = operandOf(builder, input, label);
  const {upper = true, diagonal = 0} = dictionary(options, label);
  if (s.shape.length < 2) throw typeError(label, `input rank ${s.shape.length} is less than 2`);
  if (typeof diagonal !== 'number' || !Number.isInteger(diagonal) || diagonal < MIN_LONG || diagonal > MAX_LONG) {
    throw typeError(label, `diagonal must be an integer in the range of long, got ${String(diagonal)}`);
  }
  return addNode(builder, 'triangular', [input], {upper: Boolean(upper), diagonal}, [{dataType: s.dataType, shape: s.shape.slice()}], label)[0];
}

/** Keeps element (row, col) of each matrix when col - row >= diagonal (upper) or <= diagonal (lower). */
function lowerTriangular(node, L) {
  const shape = node.inputs[0].shape;
  const T = wordType(node.inputs[0].dataType);
  const shader = new Shader('triangular').read('X', T).write('Y', T)
    .uniform('rows').uniform('cols').uniform('upper').uniform('diagonal', 'i32')
    .main(`  let col = gi % u_cols();
  let row = (gi / u_cols()) % u_rows();
  let d = i32(col) - i32(row);
  let keep = select(d <= u_diagonal(), d >= u_diagonal(), u_upper() == 1u);
  Y[gi] = select(${T}(), X[gi], keep);`);
  const uniforms = {rows: shape[shape.length - 2], cols: shape[shape.length - 1], upper: node.attrs.upper ? 1 : 0, diagonal: node.attrs.diagonal};
  L.step({shader, values: [L.value(node.inputs[0]), L.result(node)], uniforms, threads: elementCount(shape), label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {
  where: {
    optionsIndex: 3,
    method: whereMethod,
    lower: lowerWhere,
    limits: () => ({
      condition: tensorLimits(['uint8'], rankRange()),
      trueValue: tensorLimits(ALL_TYPES, rankRange()),
      falseValue: tensorLimits(ALL_TYPES, rankRange()),
      output: tensorLimits(ALL_TYPES, rankRange()),
    }),
  },
  triangular: {
    optionsIndex: 1,
    method: triangularMethod,
    lower: lowerTriangular,
    limits: () => ({input: tensorLimits(ALL_TYPES, rankRange(2)), output: tensorLimits(ALL_TYPES, rankRange(2))}),
  },
};
