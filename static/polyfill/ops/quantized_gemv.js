/**
 * The matrix-vector kernels of one-row products with packed quantized weights (an LLM's decode
 * step: y[n] = sum_k x[k] * dequantize(W[n, k]), W contiguous along K; ops/packed_weights.js
 * says how a packed element, its scale and its zero point are found).
 *
 * Split variant (hardware adapters): a workgroup of 256 invocations is `groups` column groups of
 * 256 / groups lanes; a group computes `columns` adjacent outputs. A lane's load is `vec`
 * consecutive u32 words (1, 2 or 4); lane l reads the loads l, l + lanes, l + 2 * lanes ... of
 * each of its columns' rows, so consecutive lanes read consecutive words (one 128-byte line a
 * subgroup a column for one-word loads) and consecutive A elements (8 or 4 floats a word, read
 * once for all the columns). `unroll` loads a lane are issued before any is used, keeping that
 * many loads a column in flight; with `prefetch` the next stride's loads are issued before this
 * stride's products, so a lane's loads and arithmetic overlap. Where a load's words share one
 * scale block, its scale and zero point are looked up once. Partial sums are added in workgroup memory (a halving tree), or
 * (`reduce: 'subgroup'`) by subgroupAdd, one sum a subgroup then left in workgroup memory. Wider
 * loads spread a subgroup's A reads over more cache lines (16-byte chunks a lane: A read 128
 * bytes apart); docs/packed-weights.md has the measurements.
 *
 * Serial variant (CPU adapters, SwiftShader): one invocation a column reading its row in 16-byte
 * chunks, no workgroup memory or barrier (SwiftShader pays for barriers).
 *
 * Norm prologue (`norm`, compile/norm_prologue.js): A is the input of a one-row RMS normalization
 * the kernel applies itself: every workgroup first adds up the row's squares (ops/rows.js
 * addWorkgroupReduce), then keeps the normalized row (each element divided by the row's root mean
 * square, times the scale, as ops/norm_formula.js formulaOf computes it, float16 stage by stage
 * rounded; up to NORM_MAX_K elements) in workgroup memory, which its loads of A read, so the
 * normalization has no step.
 *
 * Gated pairs (`pair`, compile/gated_pairs.js): columns 2j and 2j + 1 are two products' column j;
 * the kernel stores output j, the first's value through the epilogue with `pair_value` the
 * second's (the split variant's groups then hold an even number of columns, the serial variant's
 * invocations compute both columns of an output).
 */
import {Shader} from '../gpu/wgsl.js';
import {F16_ROUND, storeExpr, wgslType} from '../gpu/types.js';
import {formulaOf} from './norm_formula.js';
import {addWorkgroupReduce, workgroupReduceElements} from './rows.js';
import {NIBBLE_SCALES, declareScaleMap, lessZero, quantKey, unpackNibblesInPlace, unpackWord, wordMagic} from './packed_weights.js';

/** Invocations a workgroup of the split variant. */
const THREADS = 256;
/** Output columns per workgroup of the serial variant: one invocation a column. */
const SERIAL_COLS = 64;
/** Elements of one load of a lane in the split variant (docs/packed-weights.md). */
const LOAD_ELEMENTS = 16;
/** The longest row the norm prologue normalizes into workgroup memory (8 KiB). */
const NORM_MAX_K = 2048;
/**
 * Whether the norm prologue fits: a row of at most NORM_MAX_K elements whose normalized copy and
 * reduce arrays, beside the split variant's partial sums (`config`; null: the serial variant),
 * stay within `limit` bytes of workgroup memory (the device's maxComputeWorkgroupStorageSize).
 */
export function normFits(config, K, limit) {
  const own = config ? partialSums(config) : 0;
  const reduce = workgroupReduceElements(config ? THREADS : SERIAL_COLS);
  return K <= NORM_MAX_K && 4 * (own + reduce + 4 * Math.ceil(K / 4)) <= limit;
}

/** The split variant's partial sums in workgroup memory: one a lane (tree) or a subgroup, a column. */
function partialSums({columns, subgroup}) {
  return columns * (subgroup ? THREADS / subgroup : THREADS);
}

/** Workgroups the split variant aims for before it gives a group fewer columns. */
const TARGET_GROUPS = 256;

/**
 * Whether the kernels can read this product: one row, B contiguous along K with each column's
 * start on a 16-byte chunk, the blocks along K whole words aligned on words. `scaleWords`: the
 * most words (1, 2 or 4) that, aligned on as many, always share one scale (4: also when one
 * scale spans K; the serial variant's 16-byte chunks have one scale where it is 4).
 * @returns {{scaleWords: number}|null}
 */
export function quantizedGemvLayout(quant, u) {
  const per = 32 / quant.bits; // elements a word
  const chunk = 4 * per;
  if (u.M !== 1 || u.batches !== 1 || u.b_sk !== 1 || u.b_base % chunk || (u.N > 1 && u.b_sn % chunk)) return null;
  if (u.qk_t > 1) return null;
  if (u.qk_t === 1 && (u.qk_b % per || u.qk_o % per)) return null;
  const shared = (words) => u.qk_t === 0 || (u.qk_b % (words * per) === 0 && u.qk_o % (words * per) === 0);
  const scaleWords = [4, 2, 1].find(shared);
  return {scaleWords};
}

/**
 * The split variant's shape for an N x K product of `bits`-bit weights: the tuning switch
 * `qgemvConfig` where set (a member left out: chosen as below), else 4-bit elements read in place
 * (`unpack: 'mask'`; 'shift' shifts them out; docs/packed-weights.md), loads of 16 elements (2
 * words of 4-bit, 4 of 8-bit elements), up to 4 loads a lane in flight, as many lanes a column as
 * keep two loads a lane (32 to 128: K split across up to half the workgroup), and 4 columns a
 * group, fewer while that gives under TARGET_GROUPS workgroups (docs/packed-weights.md: the
 * shapes measured); at least 2 for a gated pair (`pair`). `subgroup`: the subgroup size whose
 * subgroupAdd adds a column's lanes (`reduce: 'subgroup'`, where the device has `subgroups` at one
 * fixed size), else 0: a halving tree in workgroup memory.
 * @returns {{groups: number, columns: number, unroll: number, vec: number, unpack: string, subgroup: number}}
 */
export function chooseGemvConfig(ctx, N, K, bits, pair = false) {
  const want = ctx.tuning.qgemvConfig ?? {};
  const unroll = want.unroll ?? 4;
  const vec = want.vec ?? LOAD_ELEMENTS * bits / 32;
  const loads = Math.ceil(K * bits / 32 / vec);
  let lanes = 32;
  while (lanes < 128 && lanes * 2 * 2 <= loads) lanes *= 2;
  const groups = want.groups ?? THREADS / lanes;
  let columns = want.columns ?? 4;
  if (!want.columns) {
    while (columns > 1 && Math.ceil(N / (groups * columns)) < TARGET_GROUPS) columns /= 2;
  }
  if (pair && columns === 1) columns = 2;
  // lanes of a column group add up their sums in subgroups where asked and the subgroup size is
  // fixed and divides the group (the kernel takes a subgroup to be consecutive invocations)
  const info = ctx.adapterInfo;
  const size = info?.subgroupMaxSize;
  const subgroups = want.reduce === 'subgroup' && ctx.device?.features?.has('subgroups') && size
    && info.subgroupMinSize === size && (THREADS / groups) % size === 0;
  return {groups, columns, unroll, vec, unpack: want.unpack ?? 'mask', subgroup: subgroups ? size : 0, prefetch: want.prefetch ?? false};
}

/** Workgroups of the kernel for N columns. */
export function gemvWorkgroups(N, serial, config) {
  return Math.ceil(N / (serial ? SERIAL_COLS : config.groups * config.columns));
}

/**
 * The shader (see the module comment); `vecA`: A read as vec4s (A contiguous along K, K and A's
 * offset multiples of 4); `config` from chooseGemvConfig (split variant).
 * @param {function} declareCommon (shader, batchRank, hasC) -> cTerm, from matmul_kernels.js
 * @param {function} storeY (dataType, cTerm) -> WGSL of store_y
 * @param {function} storeHelpers the data type's store helpers
 */
export function quantizedGemvShader({dataType, hasC, quant, vecA, scaleWords, serial, config, pair = false, norm = null}, declareCommon, storeY, storeHelpers) {
  const T = wgslType(dataType);
  const {bits, hasZp} = quant;
  // 4-bit elements read in place (packed_weights.js unpackNibblesInPlace), A scaled to meet them
  const inPlace = !serial && bits === 4 && config.unpack === 'mask';
  const name = serial ? 'matmul_qgemv_serial'
    : `matmul_qgemv_g${config.groups}c${config.columns}u${config.unroll}${config.vec > 1 ? `v${config.vec}` : ''}${inPlace ? 'm' : ''}${config.subgroup ? `s${config.subgroup}` : ''}${config.prefetch ? 'f' : ''}`;
  // a pair's second value as its product would have stored it
  const pairValue = (v) => `pair_value = ${storeExpr(dataType, `u_alpha() * ${v}`)};`;
  const shader = new Shader(`${name}${pair ? 'p' : ''}${norm ? 'n' : ''}${quantKey(quant)}`).read('A', vecA ? 'vec4<f32>' : T)
    .read('B', serial ? 'vec4<u32>' : config.vec > 1 ? `vec${config.vec}<u32>` : 'u32').read('S', 'f32');
  if (hasZp) shader.read('Z', 'u32');
  if (hasC) shader.read('C', T);
  if (norm?.hasScale) shader.read('G', 'f32');
  shader.write('Y', T);
  const cTerm = declareCommon(shader, 0, hasC);
  if (norm) shader.uniform('eps', 'f32');
  declareScaleMap(shader, quant);
  shader.fn(storeHelpers(dataType)).fn(storeY(dataType, cTerm));
  // A's element k (scalar) and its 4 elements from k (k a multiple of 4 when vecA)
  const raw = norm ? 'a_raw' : 'a';
  shader.fn(vecA ? `fn ${raw}_at(k: u32) -> f32 { let i = u_a_base() + k; return A[i / 4u][i % 4u]; }
fn ${raw}4(k: u32) -> vec4<f32> { return A[(u_a_base() + k) / 4u]; }`
    : `fn ${raw}_at(k: u32) -> f32 { return f32(A[u_a_base() + k * u_a_sk()]); }
fn ${raw}4(k: u32) -> vec4<f32> { return vec4<f32>(${raw}_at(k), ${raw}_at(k + 1u), ${raw}_at(k + 2u), ${raw}_at(k + 3u)); }`);
  const prologue = norm ? normPrologue(shader, {...norm, vecA}, serial ? SERIAL_COLS : THREADS, norm.K) : '';
  if (inPlace) shader.fn(`fn a4w(k: u32) -> vec4<f32> { return a4(k) * ${NIBBLE_SCALES}; }`);
  const parts = inPlace ? unpackNibblesInPlace(quant, 'w', 'z') : unpackWord(quant, 'w', 'z');
  // a word's dot product with A's elements from k: `av` the vec4s of A it meets
  const aParams = parts.map((_, i) => `a${i}: vec4<f32>`).join(', ');
  shader.fn(`fn word_dot(w: u32, z: f32, ${aParams}) -> f32 {
  return ${parts.map((e, i) => `dot(${e}, a${i})`).join(' + ')};
}`);
  const zero = (si) => `q_offset(${si})`;
  if (serial) return serialBody(shader, {quant, scaleWords, zero, pair, pairValue, prologue});
  return splitBody(shader, {quant, parts, zero, config, scaleWords, aLoad: inPlace ? 'a4w' : 'a4', pair, pairValue, prologue});
}

/**
 * The norm prologue (module comment): the returned WGSL, the first statement of the entry point
 * (all `size` invocations), adds up the row's squares, then stores the normalized row, scale
 * applied, in workgroup memory (NORM_MAX_K elements at most), which a_at / a4 read; each element
 * is normalized once a workgroup.
 */
function normPrologue(shader, {formula, hasScale, vecA, dataType}, size, K) {
  // float16: each stage rounded to binary16 as the normalization's own step rounds it
  if (dataType === 'float16') shader.fn(F16_ROUND);
  const f = formulaOf(shader, formula, dataType);
  const vecs = Math.ceil(K / 4);
  addWorkgroupReduce(shader, 'norm_sum', 'f32', 'a + b', size);
  shader.shared('norm_a', `array<vec4<f32>, ${vecs}>`);
  shader.fn(`fn a_at(k: u32) -> f32 { return norm_a[k / 4u][k % 4u]; }
fn a4(k: u32) -> vec4<f32> { return ${vecA ? 'norm_a[k / 4u]' : 'vec4<f32>(a_at(k), a_at(k + 1u), a_at(k + 2u), a_at(k + 3u))'}; }
fn norm_prologue(li: u32) {
  var v = 0.0;
  for (var k = li; k < u_K(); k += ${size}u) { let d = a_raw_at(k); v += ${f.square('d')}; }
  let total = norm_sum(v, li);
  let n = f32(u_K());
  let sd = ${f.sd('total')};
  for (var k = li; k < ${4 * vecs}u; k += ${size}u) {
    var y = 0.0;
    if (k < u_K()) {
      let x = a_raw_at(k);
      y = ${f.norm('x')};
${hasScale ? `      y = ${f.scale('G[k]')};\n` : ''}    }
    norm_a[k / 4u][k % 4u] = y;
  }
  workgroupBarrier();
}`);
  return '  norm_prologue(li);';
}

/** The split variant's entry point (module comment). */
function splitBody(shader, {quant, parts, zero, config, scaleWords, aLoad, pair, pairValue, prologue}) {
  const {bits, signed} = quant;
  const {groups, columns: R, unroll: U, vec: V} = config;
  const lanes = THREADS / groups;
  const per = 32 / bits;
  const span = V * per; // elements of one load of a lane
  // the words of one load share a scale (and zero point): one lookup and one multiply a load
  const oneScale = scaleWords >= V;
  const rs = [...Array(R).keys()];
  const us = [...Array(U).keys()];
  const js = [...Array(V).keys()];
  const sg = config.subgroup;
  // partial sums kept a column: one a lane (tree), one a subgroup
  const kept = sg ? THREADS / sg : THREADS;
  shader.shared('part', `array<f32, ${partialSums(config)}>`);
  if (sg) shader.enable('subgroups').diagnostic('off', 'subgroup_uniformity');
  // word `w` of a column whose row starts at load `row`
  shader.fn(V === 1 ? 'fn b_word(row: u32, w: u32) -> u32 { return B[row + w]; }'
    : `fn b_word(row: u32, w: u32) -> u32 { return B[row + w / ${V}u][w % ${V}u]; }`);
  const word = (q, j) => (V === 1 ? q : `${q}[${j}]`);
  const avs = (name, k) => parts.map((_, i) => `      let ${name}_${i} = ${aLoad}(${k} + ${4 * i}u);`);
  // word q's dot product with A's vec4s {name}_i, less the zero point of scale index si
  const dot = (q, name) => `word_dot(${q}, ${zero('si')}, ${parts.map((_, i) => `${name}_${i}`).join(', ')})`;
  // column r's sum gains `product` (of scale index si = sk + sn{r}) times that scale
  const add = (r, sk, product) => `      { let si = ${sk} + sn${r}; s${r} += (${product}) * S[si]; }`;
  // the products of load u (its words q{u}_{r}, A's elements from k{u}, scale index sk{u})
  const unit = (u) => {
    const lines = js.flatMap((j) => avs(`a${u}_${j}`, `k${u} + ${j * per}u`));
    if (oneScale) {
      lines.push(...rs.map((r) => add(r, `sk${u}`, js.map((j) => dot(word(`q${u}_${r}`, j), `a${u}_${j}`)).join(' + '))));
      return lines.join('\n');
    }
    for (const j of js) {
      if (j) lines.push(`      let sk${u}_${j} = scale_k(k${u} + ${j * per}u);`);
      lines.push(...rs.map((r) => add(r, j ? `sk${u}_${j}` : `sk${u}`, dot(word(`q${u}_${r}`, j), `a${u}_${j}`))));
    }
    return lines.join('\n');
  };
  const loads = (u, vi) => rs.map((r) => `      let q${u}_${r} = B[row${r} + ${vi}];`).join('\n');
  // prefetch: load u's words come from the previous stride, which then loads the next stride's
  const pre = config.prefetch;
  const prefetched = (u) => rs.map((r) => `      let q${u}_${r} = p${u}_${r};
      p${u}_${r} = B[row${r} + min(v + ${(U + u) * lanes}u, last)];`).join('\n');
  const tree = [];
  for (let h = lanes / 2; h >= 1; h /= 2) {
    tree.push(`  if (lane < ${h}u) {
${rs.map((r) => `    part[${r * THREADS}u + li] += part[${r * THREADS}u + li + ${h}u];`).join('\n')}
  }
  workgroupBarrier();`);
  }
  // column r's sum in group g: the tree's first element, or the group's subgroup sums added
  shader.fn(sg ? `fn column_total(r: u32, g: u32) -> f32 {
  var t = 0.0;
  for (var i = 0u; i < ${lanes / sg}u; i++) { t += part[r * ${kept}u + g * ${lanes / sg}u + i]; }
  return t;
}` : `fn column_total(r: u32, g: u32) -> f32 { return part[r * ${THREADS}u + g * ${lanes}u]; }`);
  const reduce = sg ? `${rs.map((r) => `  let t${r} = subgroupAdd(s${r});`).join('\n')}
  if (li % ${sg}u == 0u) {
${rs.map((r) => `    part[${r * kept}u + li / ${sg}u] = t${r};`).join('\n')}
  }
  workgroupBarrier();` : `${rs.map((r) => `  part[${r * THREADS}u + li] = s${r};`).join('\n')}
  workgroupBarrier();
${tree.join('\n')}`;
  shader.main(`${prologue}
  let g = li / ${lanes}u;
  let lane = li % ${lanes}u;
  let n0 = (wg * ${groups}u + g) * ${R}u;
  let words = u_K() / ${per}u;
  let units = u_K() / ${span}u;
${rs.map((r) => `  let col${r} = min(n0 + ${r}u, u_N() - 1u);
  let row${r} = (u_b_base() + col${r} * u_b_sn()) / ${span}u;
  let sn${r} = scale_n(col${r});
  var s${r} = 0.0;`).join('\n')}
  // the scale index of each unrolled load: where one stride of the loop spans whole scale
  // blocks (or one scale spans K), advanced by a constant, else recomputed (an integer division)
  let stride_k = ${U * lanes * span}u;
  let whole = u_qk_t() == 0u || stride_k % u_qk_b() == 0u;
  let sk_step = select(0u, (stride_k / u_qk_b()) * u_qk_s(), u_qk_t() != 0u);
${us.map((u) => `  var skw${u} = scale_k((lane + ${u * lanes}u) * ${span}u);`).join('\n')}
  var v = lane;
${pre ? `  // the next stride's loads are issued before this one's products (clamped to the row's last load)
  let last = max(units, 1u) - 1u;
${us.map((u) => rs.map((r) => `  var p${u}_${r} = B[row${r} + min(v + ${u * lanes}u, last)];`).join('\n')).join('\n')}
` : ''}  for (; v + ${(U - 1) * lanes}u < units; v += ${U * lanes}u) {
${us.map((u) => (pre ? prefetched(u) : loads(u, `v + ${u * lanes}u`))).join('\n')}
${us.map((u) => `      let k${u} = (v + ${u * lanes}u) * ${span}u;
      let sk${u} = skw${u};
${unit(u)}`).join('\n')}
    if (whole) {
${us.map((u) => `      skw${u} += sk_step;`).join('\n')}
    } else {
${us.map((u) => `      skw${u} = scale_k((v + ${(U + u) * lanes}u) * ${span}u);`).join('\n')}
    }
  }
  for (; v < units; v += ${lanes}u) {
${loads(0, 'v')}
      let k0 = v * ${span}u;
      let sk0 = scale_k(k0);
${unit(0)}
  }
${V === 1 ? '' : `  // whole words after the last whole load: a word a lane
  for (var w = units * ${V}u + lane; w < words; w += ${lanes}u) {
      let k = w * ${per}u;
      let sk = scale_k(k);
${avs('t', 'k').join('\n')}
${rs.map((r) => add(r, 'sk', dot(`b_word(row${r}, w)`, 't'))).join('\n')}
  }
`}  // the last, partial word (K not a multiple of ${per}): element by element
  if (lane == 0u) {
    for (var k = words * ${per}u; k < u_K(); k++) {
      let sk = scale_k(k);
      let j = k - words * ${per}u;
${rs.map((r) => `      { let si = sk + sn${r}; s${r} += ${lessZero(quant, wordMagic(`b_word(row${r}, words)`, 'j', bits, signed), 'q_offset(si)')} * S[si] * a_at(k); }`).join('\n')}
    }
  }
${reduce}
${pair ? `  if (lane < ${R / 2}u && n0 + 2u * lane < u_N()) {
    ${pairValue('column_total(2u * lane + 1u, g)')}
    store_y(column_total(2u * lane, g), 0u, n0 / 2u + lane, u_y_base());
  }` : `  if (lane < ${R}u && n0 + lane < u_N()) {
    store_y(column_total(lane, g), 0u, n0 + lane, u_y_base());
  }`}`, {workgroupSize: THREADS, guard: false});
  return shader;
}

/** The serial variant's entry point: one invocation a column, 16-byte chunks in order. */
function serialBody(shader, {quant, scaleWords, zero, pair, pairValue, prologue}) {
  const {bits, signed} = quant;
  const per = 32 / bits;
  const chunk = 4 * per;
  const wordsOf = (i) => `word_dot(w[${i}], z, ${(bits === 8 ? [0] : [0, 4]).map((o) => `a4(k0 + ${i * per + o}u)`).join(', ')})`;
  const full = scaleWords === 4
    ? `        let si = scale_index(k0, n);
        let z = ${zero('si')};
        s += (${[0, 1, 2, 3].map(wordsOf).join(' + ')}) * S[si];`
    : [0, 1, 2, 3].map((i) => `        {
          let si = scale_index(k0 + ${i * per}u, n);
          let z = ${zero('si')};
          s += ${wordsOf(i)} * S[si];
        }`).join('\n');
  shader.fn(`fn column_sum(n: u32) -> f32 {
  var s = 0.0;
  let row = (u_b_base() + n * u_b_sn()) / ${chunk}u;
  let chunks = (u_K() + ${chunk - 1}u) / ${chunk}u;
  for (var c = 0u; c < chunks; c++) {
    let k0 = c * ${chunk}u;
    let w = B[row + c];
    if (k0 + ${chunk}u <= u_K()) {
${full}
    } else {
      // the last, partial chunk: element by element
      for (var j = 0u; k0 + j < u_K(); j++) {
        let k = k0 + j;
        let si = scale_index(k, n);
        s += ${lessZero(quant, wordMagic(`w[j / ${per}u]`, 'j', bits, signed), 'q_offset(si)')} * S[si] * a_at(k);
      }
    }
  }
  return s;
}`);
  shader.main(pair ? `${prologue}
  let j = wg * ${SERIAL_COLS}u + li;
  if (2u * j >= u_N()) { return; }
  ${pairValue('column_sum(2u * j + 1u)')}
  store_y(column_sum(2u * j), 0u, j, u_y_base());` : `${prologue}
  let n = wg * ${SERIAL_COLS}u + li;
  if (n >= u_N()) { return; }
  store_y(column_sum(n), 0u, n, u_y_base());`, {workgroupSize: SERIAL_COLS, guard: false});
  return shader;
}
