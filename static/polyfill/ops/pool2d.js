/**
 * Pooling operators (spec §Pooling operations): averagePool2d, l2Pool2d, maxPool2d. One kernel,
 * one invocation per output element, the reduction chosen by a table entry; both layouts are read
 * in place through per-dimension strides (uniforms).
 *
 * Window taps in the padding, or past the input where "ceil" rounding adds an output, are not
 * part of the window: averagePool2d divides by the number of taps inside the input (so a window
 * entirely outside the input averages to NaN), maxPool2d ignores them (an empty window gives the
 * lowest value of the type) and l2Pool2d adds nothing for them.
 */
import {elementCount} from '../dtypes.js';
import {checkDataType, checkRank} from '../shape/common.js';
import {dimsOf, layoutStrides} from '../shape/conv.js';
import {pool2dShape} from '../shape/pool.js';
import {Shader} from '../gpu/wgsl.js';
import {storeExpr, storeHelpers, wgslType} from '../gpu/types.js';
import {addMathHelpers} from '../gpu/math.js';
import {tensorLimits, rankRange} from './limits.js';
import {outputOffset, outputPosition} from './window.js';
import {addNode, operandOf} from '../builder_state.js';

const F = ['float32', 'float16'];

/** Lowest value of each compute type, maxPool2d's initial accumulator (a uniform: WGSL constant
 * expressions cannot hold -Infinity). */
const LOWEST = {f32: -Infinity, i32: -(2 ** 31), u32: 0};

/**
 * Per operator: allowed data types, the accumulator's initial value, the WGSL updating `acc` with
 * the tap value `v`, and the WGSL of the result from `acc` and `count` (taps inside the input).
 */
const POOLS = {
  averagePool2d: {types: F, init: '0.0', update: () => 'acc += v;', result: 'acc / f32(count)'},
  l2Pool2d: {types: F, init: '0.0', update: () => 'acc += v * v;', result: 'sqrt_f(acc)'},
  maxPool2d: {
    types: ['float32', 'float16', 'int32', 'uint32', 'int8', 'uint8'],
    init: 'u_lowest()',
    // NaN wins: once acc is NaN no comparison is true, and a NaN tap replaces acc (is_nan_f tests
    // the bits: compilers may fold v != v to false).
    update: (T) => (T === 'f32' ? 'if (v > acc || is_nan_f(v)) { acc = v; }' : 'acc = max(acc, v);'),
    result: 'acc',
  },
};

function poolMethod(name) {
  const def = POOLS[name];
  /**
   * MLGraphBuilder.averagePool2d / l2Pool2d / maxPool2d(input, options) (spec "create a pooling
   * operation").
   * @throws {TypeError} invalid input, data type, rank or options, or an invalid output size
   */
  return function pool(builder, label, input, options) {
    const x = operandOf(builder, input, label, 'input');
    checkDataType(x, def.types, label, 'input');
    checkRank(x, 4, label, 'input');
    const {attrs, shape} = pool2dShape(x.shape, options ?? {}, label);
    return addNode(builder, name, [input], attrs, [{dataType: x.dataType, shape}], label)[0];
  };
}

/** Lowers a pooling node to one dispatch. */
function lower(node, L) {
  const def = POOLS[node.op];
  const {windowDimensions, padding, strides, dilations, layout} = node.attrs;
  const input = node.inputs[0];
  const out = node.outputs[0];
  const dt = out.dataType;
  const T = wgslType(dt);
  const x = dimsOf(input.shape, layout);
  const y = dimsOf(out.shape, layout);
  const shader = new Shader(node.op).read('X', T).write('Y', T).fn(storeHelpers(dt))
    .uniform('x_strides', 'u32', 4).uniform('y_strides', 'u32', 4).uniform('channels')
    .uniform('in_size', 'u32', 2).uniform('out_size', 'u32', 2).uniform('window', 'u32', 2)
    .uniform('pad', 'u32', 2).uniform('stride', 'u32', 2).uniform('dilation', 'u32', 2).uniform('lowest', T);
  shader.main(`
${outputPosition('c')}
  let xbase = n * u_x_strides(0u) + c * u_x_strides(1u);
  let ih0 = i32(oh * u_stride(0u)) - i32(u_pad(0u));
  let iw0 = i32(ow * u_stride(1u)) - i32(u_pad(1u));
  var acc = ${def.init};
  var count = 0u;
  for (var ky = 0u; ky < u_window(0u); ky++) {
    let iy = ih0 + i32(ky * u_dilation(0u));
    if (iy < 0 || iy >= i32(u_in_size(0u))) { continue; }
    for (var kx = 0u; kx < u_window(1u); kx++) {
      let ix = iw0 + i32(kx * u_dilation(1u));
      if (ix < 0 || ix >= i32(u_in_size(1u))) { continue; }
      let v = X[xbase + u32(iy) * u_x_strides(2u) + u32(ix) * u_x_strides(3u)];
      ${def.update(T)}
      count += 1u;
    }
  }
  Y[${outputOffset('c')}] = ${storeExpr(dt, def.result)};`);
  addMathHelpers(shader);
  const uniforms = {
    x_strides: layoutStrides(input.shape, layout, 'nchw'),
    y_strides: layoutStrides(out.shape, layout, 'nchw'),
    channels: x.c,
    in_size: [x.h, x.w], out_size: [y.h, y.w], window: windowDimensions,
    pad: [padding[0], padding[2]], stride: strides, dilation: dilations, lowest: LOWEST[T],
  };
  L.step({shader, values: [L.value(input), L.result(node)], uniforms, threads: elementCount(out.shape), label: node.label});
}

/** Operator table entries (see ops/index.js). */
export const operators = {};
for (const [name, def] of Object.entries(POOLS)) {
  operators[name] = {
    optionsIndex: 1,
    method: poolMethod(name),
    lower,
    limits: () => ({input: tensorLimits(def.types, rankRange(4, 4)), output: tensorLimits(def.types, rankRange(4, 4))}),
  };
}
