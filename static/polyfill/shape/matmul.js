/**
 * Shape inference and validation for the matrix products (spec §gemm, §matmul). Pure functions,
 * no GPU; every failure is a TypeError prefixed with the operator's label.
 */
import {typeError} from '../errors.js';
import {castNumber} from './cast.js';
import {broadcastShapes, checkDataType, checkRank, unidirectionallyBroadcastable} from './common.js';

/** Data types gemm and matmul accept (spec tensor-limits-gemm / tensor-limits-matmul). */
export const MATMUL_TYPES = Object.freeze(['float32', 'float16']);

/**
 * WebIDL `double` (restricted): a finite number.
 * @throws {TypeError}
 */
export function checkDouble(value, label, what) {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw typeError(label, `${what} must be a finite number, got ${String(value)}`);
  return n;
}

/**
 * Spec gemm(a, b, options) validation and output shape.
 * @param {{dataType: string, shape: number[]}} a operand slots of a: [M, K] or [K, M] with aTranspose
 * @param {{dataType: string, shape: number[]}} b operand slots of b: [K, N] or [N, K] with bTranspose
 * @param {{dataType: string, shape: number[]}|null} c operand slots of options.c, or null
 * @param {object} options MLGemmOptions {alpha = 1, beta = 1, aTranspose = false, bTranspose = false}
 * @returns {{M: number, N: number, K: number, alpha: number, beta: number, aTranspose: boolean,
 *   bTranspose: boolean, shape: number[]}} alpha and beta cast to a's data type
 * @throws {TypeError} data type not float32/float16, b or c of another type, rank not 2, inner
 *   dimensions differ, c not unidirectionally broadcastable to [M, N]
 */
export function gemmShape(a, b, c, options, label) {
  checkDataType(a, MATMUL_TYPES, label, 'a');
  if (b.dataType !== a.dataType) throw typeError(label, `b (${b.dataType}) must have the data type of a (${a.dataType})`);
  checkRank(a, 2, label, 'a');
  checkRank(b, 2, label, 'b');
  const alpha = castNumber(checkDouble(options.alpha ?? 1, label, 'alpha'), a.dataType);
  const beta = castNumber(checkDouble(options.beta ?? 1, label, 'beta'), a.dataType);
  const aTranspose = Boolean(options.aTranspose);
  const bTranspose = Boolean(options.bTranspose);
  const shapeA = aTranspose ? [...a.shape].reverse() : [...a.shape];
  const shapeB = bTranspose ? [...b.shape].reverse() : [...b.shape];
  if (shapeA[1] !== shapeB[0]) {
    throw typeError(label, `inner dimensions differ: a is [${shapeA}] and b is [${shapeB}] after transposition`);
  }
  const shape = [shapeA[0], shapeB[1]];
  if (c) {
    if (!unidirectionallyBroadcastable(c.shape, shape)) throw typeError(label, `c of shape [${c.shape}] is not unidirectionally broadcastable to [${shape}]`);
    if (c.dataType !== a.dataType) throw typeError(label, `c (${c.dataType}) must have the data type of a (${a.dataType})`);
  }
  return {M: shape[0], N: shape[1], K: shapeA[1], alpha, beta, aTranspose, bTranspose, shape};
}

/**
 * Spec matmul(a, b) validation and output shape: both of rank >= 2, colsA == rowsB, the batch
 * dimensions (all but the last two) bidirectionally broadcast.
 * @returns {{M: number, N: number, K: number, batchShape: number[], shape: number[]}}
 * @throws {TypeError}
 */
export function matmulShape(a, b, label) {
  checkDataType(a, MATMUL_TYPES, label, 'a');
  if (b.dataType !== a.dataType) throw typeError(label, `b (${b.dataType}) must have the data type of a (${a.dataType})`);
  const ra = a.shape.length;
  const rb = b.shape.length;
  if (ra < 2 || rb < 2) throw typeError(label, `a and b must have rank >= 2, got ${ra} and ${rb}`);
  const [M, K] = a.shape.slice(ra - 2);
  const [rowsB, N] = b.shape.slice(rb - 2);
  if (K !== rowsB) throw typeError(label, `columns of a (${K}) differ from rows of b (${rowsB})`);
  const batchShape = broadcastShapes(a.shape.slice(0, ra - 2), b.shape.slice(0, rb - 2), label);
  return {M, N, K, batchShape, shape: [...batchShape, M, N]};
}
