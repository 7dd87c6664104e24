/**
 * The tuning switches of a context: every knob that changes how a graph is compiled or how the
 * context talks to the GPU queue, never what it computes. Each context holds one frozen `tuning`
 * object (the context slot `tuning`) with every switch below; a switch left at its default
 * (undefined for "the polyfill decides") lets the adapter decide.
 *
 * Set them only through the documented entry points:
 *   navigator.ml.createContext({polyfill: {tuning: {matmul: 'tiled', splitK: 2}}})
 *   configureContext(context, {tuning: {submitSteps: 8}})      (options.js)
 * A member given as undefined or null goes back to its default; a member not given keeps its
 * value. Unknown names and values of the wrong kind throw a TypeError, so a misspelt switch in a
 * test or a benchmark fails loudly instead of measuring the default.
 *
 * Tests use them to reach kernels the adapter would not pick (SwiftShader runs every kernel) and
 * to build the plan a hardware adapter gets; benchmarks to compare variants in one page.
 * docs/tuning.md says what each was measured for.
 */

const oneOf = (...values) => (v) => values.includes(v);
const bool = (v) => typeof v === 'boolean';
const positiveInt = (v) => Number.isInteger(v) && v >= 1;
const nonNegative = (v) => typeof v === 'number' && v >= 0;
const object = (v) => typeof v === 'object';
const powerOfTwoUpTo = (max) => (v) => v === undefined || (Number.isInteger(v) && v >= 1 && v <= max && (v & (v - 1)) === 0);
const gemvConfig = (v) => v !== null && typeof v === 'object' && Object.keys(v).every((k) => ['groups', 'columns', 'unroll', 'vec', 'unpack', 'reduce', 'prefetch'].includes(k))
  && powerOfTwoUpTo(8)(v.groups) && powerOfTwoUpTo(8)(v.columns) && powerOfTwoUpTo(8)(v.unroll) && powerOfTwoUpTo(4)(v.vec)
  && [undefined, 'shift', 'mask'].includes(v.unpack) && [undefined, 'tree', 'subgroup'].includes(v.reduce)
  && [undefined, true, false].includes(v.prefetch);
const matrixKernelShape = (v) => v !== null && typeof v === 'object'
  && Object.keys(v).every((k) => ['depth', 'stages', 'storeBatch', 'storeHalves', 'direct'].includes(k))
  && [undefined, 16, 32, 64].includes(v.depth) && [undefined, 1, 2].includes(v.stages) && [undefined, 1, 2].includes(v.storeHalves)
  && powerOfTwoUpTo(8)(v.storeBatch) && [undefined, true, false].includes(v.direct);

/**
 * name -> {default, unit, readBy, what, valid(value)}. `readBy` names the module (and function)
 * that reads the switch.
 */
export const SWITCHES = Object.freeze({
  adapterInfo: {default: undefined, unit: 'GPUAdapterInfo-like {vendor, architecture, description, isFallbackAdapter}',
    readBy: 'ops/adapter_kind.js isSoftwareAdapter', valid: object,
    what: 'compile as for this adapter: every kernel choice and pass that asks whether the adapter is a software one (tests build an NVIDIA plan on SwiftShader)'},
  attention: {default: undefined, unit: 'boolean', readBy: 'compile/plan.js (the attention pass)', valid: bool,
    what: 'fuse matmul -> softmax -> matmul into one step (undefined: on hardware adapters only)'},
  attentionConfig: {default: undefined, unit: '{rows, perRow, keys}: powers of two', readBy: 'ops/attention.js chooseAttentionConfig',
    valid: object, what: 'the fused attention kernel\'s configuration'},
  matmul: {default: undefined, unit: "'blocked' | 'tiled' | 'tiled128' | 'matrix' | 'matrix128' | 'gemv' | 'qgemv'",
    readBy: 'ops/matmul_choice.js chooseMatmulKernel, ops/quantized_matmul.js',
    valid: oneOf('blocked', 'tiled', 'tiled128', 'matrix', 'matrix128', 'gemv', 'qgemv'),
    what: "the matrix kernel of every matmul, gemm and non-pointwise product ('qgemv': packed-weight products only; 'matrix', 'matrix128': the matrix units where the product may use them, float16 or float32 under productPrecision 'float16', and the device has them, else their tiled size)"},
  matrixConfig: {default: undefined, unit: "'MxNxK' of an f16 -> f32 subgroup-matrix configuration", readBy: 'ops/matmul_matrix_units.js matrixUnits',
    valid: (v) => typeof v === 'string' && /^\d+x\d+x\d+$/.test(v),
    what: "the matrix units' configuration (undefined: the first the adapter lists with M, N <= 16; one the adapter does not list turns the units off)"},
  matrixGrid: {default: undefined, unit: "'RxC': subgroups of a workgroup over its tile, each 1, 2 or 4",
    readBy: 'ops/matmul_matrix_units.js matrixUnits', valid: (v) => typeof v === 'string' && /^[124]x[124]$/.test(v),
    what: 'the matrix kernels\' subgroups over a tile (undefined: 2x2; a grid the device cannot hold: the tiled kernel)'},
  matrixKernel: {default: undefined, unit: '{depth, stages, storeBatch, storeHalves, direct}: depth 16, 32 or 64; stages and storeHalves 1 or 2; storeBatch 1, 2, 4 or 8; direct boolean',
    readBy: 'ops/matmul_matrix_units.js matrixUnits', valid: matrixKernelShape,
    what: "the matrix kernels' shape: depth of a staged slice of K, copies of the staged tiles (2: one barrier a slice), result matrices a subgroup stores at a time and copies of those (2: one barrier a batch), split tiles inside the product storing their sums directly (a member left out: MATRIX_KERNEL's; a shape the device cannot hold: the tiled kernel)"},
  qgemvConfig: {default: undefined, unit: "{groups, columns, unroll, vec, unpack, reduce, prefetch}: powers of two, groups, columns and unroll 1..8, vec 1..4; unpack 'shift' | 'mask'; reduce 'tree' | 'subgroup'; prefetch boolean",
    readBy: 'ops/quantized_gemv.js chooseGemvConfig', valid: gemvConfig,
    what: "the packed matrix-vector kernel's shape: column groups a workgroup of 256, columns a group, loads a lane in flight, words a load, how 4-bit elements are unpacked, how a column's lanes add up their sums, whether a stride's loads are issued during the previous stride's products (a member left out: the kernel's choice)"},
  qgemvSerial: {default: undefined, unit: 'boolean', readBy: 'ops/matmul_kernels.js (the packed-weight matrix-vector kernel)', valid: bool,
    what: 'one invocation a column with no barrier (undefined: on software adapters), instead of 32 invocations sharing a column'},
  packedWide: {default: true, unit: 'boolean', readBy: 'ops/matmul_choice.js chooseMatmulKernel', valid: bool,
    what: 'packed-weight products of 128 rows or more take 128x128 tiles split to about 256 workgroups where they can reach that many (false: 128x128 tiles only from WIDE_TILES on, as float products, and split to 1024 workgroups as other packed products)'},
  packedWords: {default: true, unit: 'boolean', readBy: 'ops/matmul_kernels.js (the tiled kernels of packed-weight products)', valid: bool,
    what: 'tiled products load packed weights a word at a time with one scale lookup a word where the layout allows (false: an element at a time)'},
  gatedPairs: {default: true, unit: 'boolean', readBy: 'compile/gated_pairs.js gatedPairsPass', valid: bool,
    what: 'two products of one A, one read by the other\'s fused stage (a SwiGLU\'s gate and up), are one product (false: two)'},
  normPrologue: {default: true, unit: 'boolean', readBy: 'compile/norm_prologue.js normProloguePass', valid: bool,
    what: 'a one-row RMS norm read only by packed products is normalized in their matrix-vector kernel (false: its own step)'},
  scatterSearchMax: {default: 64, unit: 'update slices (0: never)', readBy: 'ops/gather.js lowerScatterND', valid: (v) => Number.isInteger(v) && v >= 0,
    what: 'a scatterND of at most this many update slices is one step in which each output element searches the updates, instead of copy, claim and write steps'},
  pointwise: {default: undefined, unit: "'blocked' | 'tiled' | 'tiled128' | 'gemv'", readBy: 'ops/conv2d.js pointwiseKernel',
    valid: oneOf('blocked', 'tiled', 'tiled128', 'gemv'), what: 'the matrix kernel of a pointwise (1x1) conv2d'},
  rows: {default: undefined, unit: "'invocation' | 'workgroup'", readBy: 'ops/rows.js useShortRows',
    valid: oneOf('invocation', 'workgroup'), what: 'row kernels (softmax, reductions, normalizations): one invocation or one workgroup a row'},
  splitK: {default: undefined, unit: 'count (1: never split)', readBy: 'ops/matmul_choice.js splitCount', valid: positiveInt,
    what: 'split every tiled product into this many ranges of K'},
  splitGroups: {default: undefined, unit: 'workgroups (default 128; 1024 for packed-weight products, 256 for those on 128x128 tiles)', readBy: 'ops/matmul_choice.js splitCount', valid: positiveInt,
    what: 'products of fewer workgroups are split along K'},
  splitMinK: {default: undefined, unit: 'elements of K (default 64)', readBy: 'ops/matmul_choice.js splitCount', valid: positiveInt,
    what: 'the least depth of one split'},
  nearSplit: {default: undefined, unit: 'count (default 4)', readBy: 'ops/matmul_choice.js splitCount', valid: positiveInt,
    what: 'splits of a product of three quarters of splitGroups or more'},
  splitRound: {default: undefined, unit: "'floor' | 'ceil'", readBy: 'ops/matmul_choice.js splitCount', valid: oneOf('floor', 'ceil'),
    what: "'ceil': the fewest splits that reach splitGroups workgroups, instead of the most that stay within it"},
  workgroupsPerDimension: {default: undefined, unit: 'workgroups (at most the device limit)', readBy: 'compile/lowering.js Lowering.step',
    valid: positiveInt, what: "fold a step's grid as if the device's maxComputeWorkgroupsPerDimension were this (tests reach the folded grids)"},
  submitSteps: {default: undefined, unit: "steps per command buffer, or 'doubling'", readBy: 'compile/plan.js Plan.dispatch',
    valid: (v) => v === 'doubling' || positiveInt(v),
    what: 'how dispatch() cuts the plan into submits (undefined: 4, 8, 16... onto an idle queue, else one)'},
  deferWrites: {default: undefined, unit: 'boolean', readBy: 'context.js writeTensor (gpu/pending_writes.js)', valid: bool,
    what: 'hold writeTensor copies until the next dispatch/read (undefined: where queue waits are nudged)'},
  stageWrites: {default: true, unit: 'boolean', readBy: 'context.js writeTensor (gpu/pending_writes.js)', valid: bool,
    what: 'large held writes go through a mapped upload buffer per tensor'},
  holdStagedWrites: {default: false, unit: 'boolean', readBy: 'context.js writeTensor (gpu/pending_writes.js)', valid: bool,
    what: 'hold writes into the upload buffer too, instead of flushing them at once'},
  faultInReads: {default: true, unit: 'boolean', readBy: 'context.js readTensor (host_memory.js)', valid: bool,
    what: "fault in a large read result's pages while the GPU works"},
  nudgeQueue: {default: undefined, unit: 'boolean', readBy: 'gpu/completion.js', valid: bool,
    what: 'nudge queue waits (undefined: on hardware adapters); fastReadback: false turns nudging off whatever this says'},
  nudge: {default: 'submit', unit: "'submit' | 'write'", readBy: 'gpu/completion.js', valid: oneOf('submit', 'write'),
    what: 'what a nudge sends: an empty queue.submit or a 16-byte writeBuffer'},
  nudgeIntervalMs: {default: 0.25, unit: 'ms', readBy: 'gpu/completion.js', valid: nonNegative,
    what: 'least time between two nudges (0: every task)'},
  nudgeCapMs: {default: 100, unit: 'ms', readBy: 'gpu/completion.js', valid: nonNegative,
    what: 'the nudge loop stops after this long without a wait starting or settling'},
});

/** The tuning every context starts with (a frozen object). */
export const DEFAULT_TUNING = Object.freeze(Object.fromEntries(Object.entries(SWITCHES).map(([k, d]) => [k, d.default])));

/**
 * `base` with the members of `changes` applied (undefined or null: back to the default).
 * @param {object} base a frozen tuning object
 * @param {object} [changes] switch name -> value
 * @param {string} label the caller, for messages
 * @returns {object} a new frozen tuning object
 * @throws {TypeError} an unknown switch or a value of the wrong kind
 */
export function withTuning(base, changes, label) {
  if (changes === undefined || changes === null) return base;
  if (typeof changes !== 'object') throw new TypeError(`${label}: tuning must be an object`);
  const next = {...base};
  for (const [name, value] of Object.entries(changes)) {
    const s = SWITCHES[name];
    if (!s) throw new TypeError(`${label}: unknown tuning switch "${name}" (known: ${Object.keys(SWITCHES).join(', ')})`);
    if (value === undefined || value === null) {
      next[name] = s.default;
    } else {
      if (!s.valid(value)) throw new TypeError(`${label}: tuning.${name} must be ${s.unit}`);
      next[name] = typeof value === 'object' ? Object.freeze({...value}) : value;
    }
  }
  return Object.freeze(next);
}
