/**
 * The one epilogue of every producer kernel (conv2d's kernels, convTranspose2d, the matrix
 * kernels of matmul_kernels.js, the element-wise kernel): the WGSL function
 *   fn epilogue(v: f32, i: u32) -> f32
 * that each store site applies to the value it computed (accumulator, bias and alpha/beta terms
 * included) before storing it at element `i` of the output, `i` being that element's row-major
 * index in the output's shape (= its offset in the output buffer). It evaluates the element-wise
 * stages the fusion pass (compile/fusion.js) folded into the producer, the node's
 * `attrs.epilogue`; with none it returns v.
 *
 * Stage expressions are those of the unfused operators (ops/activations.js ACTIVATIONS,
 * ops/elementwise.js BINARY/UNARY), so NaN and ±Inf behave identically; their parameters
 * (alpha, minValue...) are uniforms `e<k>_<name>`, read as p_<name>() in the expression (renamed
 * per stage); a binary stage's other operand is an extra binding `E<k>`, read at `i` (same element
 * count), 0 (one element) or through a broadcast indexer whose shape and strides are uniforms, or,
 * when it is an earlier value of the chain itself (`chainOther`: GELU's x * f(x)), that value,
 * kept in a variable `c<j>` (c0 = the producer's value, c<k+1> = stage k's), or, when it is the
 * other product of a gated pair (`pairOther`, compile/gated_pairs.js), the private variable
 * `pair_value`, which the kernel sets to that product's stored value before each store.
 * For float16 the unfused operators round every result to binary16 when they store it: the
 * epilogue rounds the producer's value and each stage's result the same way (the store rounds
 * once more, which changes nothing).
 *
 * Kernels declare the epilogue after their own bindings (its operands are the last bindings) and
 * append its values and uniforms to their step.
 */
import {elementCount} from '../dtypes.js';
import {broadcastStrides} from '../shape/common.js';
import {declareIndexer} from '../gpu/wgsl.js';
import {F16_ROUND, wgslType} from '../gpu/types.js';
import {MATH} from '../gpu/math.js';
import {collectHelpers, helpersUsedIn} from '../gpu/wgsl_lib.js';

/**
 * Adds `fn epilogue(v: f32, i: u32) -> f32` for the fused stages of `node` to `shader`, with the
 * bindings and uniforms the stages need.
 * @param {import('./wgsl.js').Shader} shader declared up to its own last binding
 * @param {import('../compile/lowering.js').Lowering} L
 * @param {object|null} node the producer node (null: a step of no builder node, identity)
 * @param {object} [own] the kernel's own expression, so that the helpers of both are added once:
 * @param {string} [own.uses] its WGSL text
 * @param {object} [own.library] the helper library it draws on (default gpu/math.js MATH, which
 *   the stages use; it must contain MATH)
 * @returns {{values: object[], uniforms: Record<string, number|number[]>}} to append to the
 *   step's values and merge into its uniforms
 */
export function addEpilogue(shader, L, node, {uses = '', library = MATH} = {}) {
  const stages = node?.attrs.epilogue ?? [];
  const dataType = node?.outputs[0].dataType;
  const values = [];
  const uniforms = {};
  if (!stages.length) {
    if (uses) shader.fn(collectHelpers(library, helpersUsedIn(library, uses)));
    shader.fn('fn epilogue(v: f32, i: u32) -> f32 { return v; }');
    return {values, uniforms};
  }
  const round = dataType === 'float16' ? (e) => `f16_round(${e})` : (e) => e;
  const fns = [];
  const calls = [];
  if (stages.some((st) => st.pairOther)) shader.fn('var<private> pair_value: f32;');
  let exprs = uses;
  stages.forEach((stage, k) => {
    const expr = stage.expr.replace(/\bp_(\w+)\(\)/g, (_, name) => `u_e${k}_${name}()`);
    exprs += ` ${expr}`;
    for (const [name, value] of Object.entries(stage.attrs)) {
      shader.uniform(`e${k}_${name}`, 'f32');
      uniforms[`e${k}_${name}`] = value;
    }
    const [x, y] = stage.vars;
    let bind = `  let ${x} = v;`;
    let param = '';
    let arg = '';
    if (stage.pairOther) {
      bind += `\n  let ${y} = pair_value;`;
    } else if (stage.chainOther !== undefined) {
      bind += `\n  let ${y} = o;`;
      param = ', o: f32';
      arg = `, c${stage.chainOther}`;
    } else if (stage.other) {
      const other = stage.other;
      const outShape = stage.node.outputs[0].shape;
      shader.read(`E${k}`, wgslType(other.dataType));
      values.push(L.value(other));
      const n = elementCount(other.shape);
      let index = 'i';
      if (n === 1) index = '0u';
      else if (n !== elementCount(outShape)) {
        declareIndexer(shader, `e${k}`, outShape.length);
        uniforms[`e${k}_shape`] = outShape;
        uniforms[`e${k}_strides`] = broadcastStrides(other.shape, outShape);
        index = `e${k}_offset(i)`;
      }
      bind += `\n  let ${y} = E${k}[${index}];`;
    }
    fns.push(`fn epilogue_${k}(v: f32, i: u32${param}) -> f32 {\n${bind}\n  return ${expr};\n}`);
    calls.push(`  let c${k + 1} = ${round(`epilogue_${k}(c${k}, i${arg})`)};`);
  });
  const needsRound = dataType === 'float16' && !shader.helpers.some((h) => h === F16_ROUND);
  if (needsRound) shader.fn(F16_ROUND);
  shader.fn(collectHelpers(library, helpersUsedIn(library, exprs)));
  shader.fn(`${fns.join('\n')}
fn epilogue(v: f32, i: u32) -> f32 {
  let c0 = ${round('v')};
${calls.join('\n')}
  return c${stages.length};
}`);
  return {values, uniforms};
}
