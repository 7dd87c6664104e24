/**
 * Which matrix kernel a product runs (chooseMatmulKernel) and how many ranges of K a tiled one is
 * split into (splitCount), from the product's shape, the adapter and the context's tuning
 * switches; ops/matmul_kernels.js builds the steps. docs/design-notes.md and
 * docs/packed-weights.md have the measurements behind the constants.
 */
import {isSoftwareAdapter} from './adapter_kind.js';
import {matrixUnitsFor} from './matmul_matrix_units.js';

/** Products of at most this many rows (or, float B, columns) run the gemv kernel. */
export const GEMV_ROWS = 4;
/** 128x128 tiles once there are this many of them (below SPLIT_GROUPS such a product is split too, see splitCount()). */
const WIDE_TILES = 96;
/** Split K (products of fewer than half this many workgroups) into as many ranges as keep a product within this many workgroups... */
const SPLIT_GROUPS = 128;
/**
 * SPLIT_GROUPS of packed-weight products: a tile that dequantizes in its loads costs more, and an
 * LLM prefill's products (128 rows, K of a few hundred to a few thousand) ran faster split until
 * about this many workgroups (docs/packed-weights.md).
 */
const PACKED_SPLIT_GROUPS = 1024;
/**
 * Packed-weight products of at least 128 rows take 128x128 tiles where, split along K, they can
 * reach this many workgroups, and are split to about this many (not PACKED_SPLIT_GROUPS): each
 * weight is then dequantized once for 128 rows instead of twice, which made large products faster
 * and left an LLM's own shapes as they were (docs/packed-weights.md has the measurements).
 */
const PACKED_WIDE_GROUPS = 256;
/** ...products of three quarters as many up to SPLIT_GROUPS this many ways (those between half and three quarters: none). */
const NEAR_SPLIT = 4;
/** ...but give each split at least this much of K (a multiple of the 16-deep slices). */
const SPLIT_MIN_K = 64;
/** The most splits of one product. */
const SPLIT_MAX = 32;

/** 128x128 tiles of an M x N product of `batches`. */
function wideTiles(M, N, batches) {
  return batches * Math.ceil(M / 128) * Math.ceil(N / 128);
}

/** The most ranges K splits into: each at least SPLIT_MIN_K (`splitMinK`) deep, SPLIT_MAX at most. */
function mostSplits(ctx, K) {
  return Math.min(SPLIT_MAX, Math.max(1, Math.floor(K / (ctx.tuning.splitMinK ?? SPLIT_MIN_K))));
}

/**
 * The kernel for an M x N x K product of `dataType`: 'gemv' for few rows, 'blocked' on a CPU
 * adapter, 'matrix128' / 'matrix' where the product runs on the matrix units
 * (matmul_matrix_units.js matrixUnitsFor), else 'tiled128' for products with many 128x128
 * tiles or packed-weight products that take them (packedWide), else 'tiled'. The tuning switch
 * `matmul` (tuning.js) forces one ('matrix' and 'matrix128' only where the product may use the
 * matrix units, else their tiled size).
 * @param {number} [packedK] K of a product of packed weights (0: float B)
 */
export function chooseMatmulKernel(ctx, M, N, batches, dataType, packedK = 0) {
  const override = ctx.tuning.matmul;
  if (override) return override;
  if (isSoftwareAdapter(ctx)) return 'blocked';
  if (M <= GEMV_ROWS) return 'gemv';
  if (packedK && packedWide(ctx, M, N, batches, packedK)) return 'tiled128';
  const wide = wideTiles(M, N, batches) >= WIDE_TILES;
  if (dataType && matrixUnitsFor(ctx, dataType)) return wide ? 'matrix128' : 'matrix';
  return wide ? 'tiled128' : 'tiled';
}

/**
 * Whether a packed-weight M x N x K product (of `batches`) takes 128x128 tiles by the rule of
 * PACKED_WIDE_GROUPS: at least 128 rows, and its tiles times the most splits K allows reach
 * PACKED_WIDE_GROUPS workgroups (an LLM's narrow q/k/v and output products keep the 64x64 tiles'
 * four times as many). The tuning switch `packedWide` false: never.
 */
export function packedWide(ctx, M, N, batches, K) {
  if (!ctx.tuning.packedWide || M < 128) return false;
  return wideTiles(M, N, batches) * mostSplits(ctx, K) >= PACKED_WIDE_GROUPS;
}

/**
 * How many ranges of K a tiled product of `groups` workgroups is split into: 1 on CPU adapters
 * (they run the blocked kernel) and for products of SPLIT_GROUPS (PACKED_SPLIT_GROUPS when
 * `packed`: its B packed weights; PACKED_WIDE_GROUPS when `wide`: on the 128x128 tiles packedWide
 * chose) workgroups or more; NEAR_SPLIT
 * from three quarters of that; 1 from half of it (the reduce step would cost what the split
 * saves); else as many splits as keep the product within SPLIT_GROUPS workgroups (at least 2),
 * not more: past the GPU's core count some cores run two workgroups and the product waits for
 * them. Each range is at least SPLIT_MIN_K deep. The tuning switches `splitK` (a forced count,
 * 1: never split), `splitGroups`, `splitMinK`, `nearSplit` and `splitRound` replace these
 * choices (tuning.js); docs/design-notes.md has the measurements behind them.
 * @returns {number} splits (1 = none)
 */
export function splitCount(ctx, groups, K, packed = false, wide = false) {
  const o = ctx.tuning;
  if (o.splitK) return Math.min(o.splitK, Math.max(1, Math.ceil(K / 16)));
  const target = o.splitGroups ?? (!packed ? SPLIT_GROUPS : wide ? PACKED_WIDE_GROUPS : PACKED_SPLIT_GROUPS);
  if (isSoftwareAdapter(ctx) || groups >= target) return 1;
  let wanted;
  if (groups >= target * 3 / 4) wanted = o.nearSplit ?? NEAR_SPLIT;
  else if (groups >= target / 2) return 1;
  else wanted = o.splitRound === 'ceil' ? Math.ceil(target / groups) : Math.max(2, Math.floor(target / groups));
  return Math.min(mostSplits(ctx, K), wanted);
}
