/**
 * The internal operator table: nodes that no builder method makes, only compile passes
 * (compile/plan.js PASSES): op name -> {lower(node, L)}. Beside OPERATORS (ops/index.js), which
 * holds the spec's operators; compile/plan.js lowers a node through whichever table has its op.
 * A new pass that emits a new kind of node adds its module's `internalOperators` here.
 */
import {internalOperators as attention} from './attention.js';
import {internalOperators as gather} from './gather.js';
import {internalOperators as mergedMatmul} from './merged_matmul.js';
import {internalOperators as movement} from './movement.js';
import {internalOperators as quantizedGather} from './quantized_gather.js';
import {internalOperators as quantizedMatmul} from './quantized_matmul.js';
import {internalOperators as rotary} from './rotary.js';

export const INTERNAL_OPERATORS = Object.freeze({
  ...attention,
  ...gather,
  ...mergedMatmul,
  ...movement,
  ...quantizedGather,
  ...quantizedMatmul,
  ...rotary,
});
