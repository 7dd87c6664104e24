/**
 * The operator table: spec method name -> {optionsIndex, method(builder, label, ...args),
 * lower(node, L), limits(ctx)}. Each op family file exports its entries as `operators`.
 */
import {operators as elementwise} from './elementwise.js';
import {operators as quantize} from './quantize.js';
import {operators as cast} from './cast.js';
import {operators as activations} from './activations.js';
import {operators as gather} from './gather.js';
import {operators as movement} from './movement.js';
import {operators as where} from './where.js';
import {operators as conv2d} from './conv2d.js';
import {operators as convTranspose2d} from './conv_transpose2d.js';
import {operators as pool2d} from './pool2d.js';
import {operators as resample2d} from './resample2d.js';
import {operators as gemm} from './gemm.js';
import {operators as softmax} from './softmax.js';
import {operators as reduce} from './reduce.js';
import {operators as argminmax} from './argminmax.js';
import {operators as cumulativeSum} from './cumulative_sum.js';
import {operators as normalization} from './normalization.js';
import {operators as recurrent} from './recurrent.js';

export const OPERATORS = Object.freeze({
  ...elementwise,
  ...quantize,
  ...cast,
  ...activations,
  ...gather,
  ...movement,
  ...where,
  ...conv2d,
  ...convTranspose2d,
  ...pool2d,
  ...resample2d,
  ...gemm,
  ...softmax,
  ...reduce,
  ...argminmax,
  ...cumulativeSum,
  ...normalization,
  ...recurrent,
});
