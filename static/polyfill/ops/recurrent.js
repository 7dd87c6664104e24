/**
 * Recurrent operators (spec §gru, §gruCell, §lstm, §lstmCell), composed at lowering time from
 * the matrix-product kernel (matmul_kernels.js) and the gate kernels (recurrent_kernels.js):
 *
 *   per direction:  XW = input[steps * batch, inputSize] x weight[d]^T + bias[d]   (one product)
 *   per step t:     HR = h x recurrentWeight[d]^T + recurrentBias[d]               (one product)
 *                   gates(XW rows of t, HR, h, c) -> h', c'                        (element-wise)
 * GRU without resetAfter needs (r * h) before its new-gate product: reset kernel, product, update
 * kernel. States alternate between two scratch values; the last step writes the outputs; the
 * returned sequence gets every step's h' at its time index (backward runs from the end).
 */
import {FLOAT_TYPES} from '../dtypes.js';
import {cellAttrs, GRU_LAYOUTS, LSTM_LAYOUTS, recurrentAttrs} from '../shape/recurrent.js';
import {optionsDict} from '../shape/reduce.js';
import {matmulStep} from './matmul_kernels.js';
import {fillZero, gruGatesStep, gruResetStep, gruUpdateStep, lstmGatesStep} from './recurrent_kernels.js';
import {rankRange, tensorLimits} from './limits.js';
import {addNode, operandOf} from '../builder_state.js';

/** Positional operands and option operands of each operator, in node-input order. */
const OPERANDS = {
  gru: {positional: ['input', 'weight', 'recurrentWeight'], options: ['bias', 'recurrentBias', 'initialHiddenState']},
  lstm: {positional: ['input', 'weight', 'recurrentWeight'], options: ['bias', 'recurrentBias', 'peepholeWeight', 'initialHiddenState', 'initialCellState']},
  gruCell: {positional: ['input', 'weight', 'recurrentWeight', 'hiddenState'], options: ['bias', 'recurrentBias']},
  lstmCell: {positional: ['input', 'weight', 'recurrentWeight', 'hiddenState', 'cellState'], options: ['bias', 'recurrentBias', 'peepholeWeight']},
};

function recurrentMethod(kind) {
  const spec = OPERANDS[kind];
  const isCell = kind.endsWith('Cell');
  return function method(builder, label, ...args) {
    const nPos = spec.positional.length;
    const opts = optionsDict(args[nPos + (isCell ? 1 : 2)], label);
    const s = {};
    const inputs = [];
    const index = {};
    spec.positional.forEach((name, i) => {
      s[name] = operandOf(builder, args[i], label, name);
      index[name] = inputs.push(args[i]) - 1;
    });
    for (const name of spec.options) {
      if (opts[name] === undefined) continue;
      s[name] = operandOf(builder, opts[name], label, name);
      index[name] = inputs.push(opts[name]) - 1;
    }
    const attrs = isCell
      ? cellAttrs(kind, s, args[nPos], opts, label)
      : recurrentAttrs(kind, s, args[nPos], args[nPos + 1], opts, label);
    attrs.index = index;
    const {numDirections: D, batchSize: B, hiddenSize: H, steps} = attrs;
    const dataType = s.input.dataType;
    const state = {dataType, shape: isCell ? [B, H] : [D, B, H]};
    const outs = kind.startsWith('lstm') ? [state, state] : [state];
    if (attrs.returnSequence) outs.push({dataType, shape: [steps, D, B, H]});
    const outputs = addNode(builder, kind, inputs, attrs, outs, label);
    return kind === 'gruCell' ? outputs[0] : outputs;
  };
}

/** Gate column offsets (elements) within XW/HR rows for the operator's layout. */
function gateOffsets(kind, attrs) {
  const h = attrs.hiddenSize;
  const layout = kind.startsWith('gru') ? GRU_LAYOUTS[attrs.layout] : LSTM_LAYOUTS[attrs.layout];
  return Object.fromEntries(Object.entries(layout).map(([g, k]) => [g, k * h]));
}

function lowerRecurrent(node, L) {
  const kind = node.op;
  const a = node.attrs;
  const isGru = kind.startsWith('gru');
  const isCell = kind.endsWith('Cell');
  const G = isGru ? 3 : 4;
  const {steps: S, batchSize: B, inputSize: I, hiddenSize: H, numDirections: D} = a;
  const GH = G * H;
  const BH = B * H;
  const dataType = node.outputs[0].dataType;
  const label = node.label;
  const value = (name) => (a.index[name] === undefined ? null : L.value(node.inputs[a.index[name]]));
  const x = value('input');
  const w = value('weight');
  const rw = value('recurrentWeight');
  const bias = value('bias');
  const rbias = value('recurrentBias');
  const peep = value('peepholeWeight');
  const h0 = isCell ? value('hiddenState') : value('initialHiddenState');
  const c0 = isCell ? value('cellState') : value('initialCellState');
  const outH = L.result(node, 0);
  const outC = isGru ? null : L.result(node, 1);
  const outSeq = a.returnSequence ? L.result(node, node.outputs.length - 1) : null;
  const bytes = 4; // compute layout: one 32-bit word per float32/float16 element
  const off = gateOffsets(kind, a);

  // Input projections of every step at once, per direction: XW[d] = X W[d]^T + bias[d].
  const xw = L.temp(D * S * B * GH * bytes, `${label}:XW`);
  for (let d = 0; d < D; d++) {
    matmulStep(L, {
      label: `${label}:input-projection`, dataType, a: x, b: w, c: bias ?? undefined, y: xw,
      M: S * B, N: GH, K: I, aStrides: [I, 1], bStrides: [1, I], cStrides: [0, 1],
      offsets: {a: 0, b: d * GH * I, c: d * GH, y: d * S * B * GH},
    });
  }
  const zero = (!h0 || (!isGru && !c0)) ? L.temp(BH * bytes, `${label}:zero`) : null;
  if (zero) fillZero(L, zero, BH, dataType, `${label}:zero`);
  const ping = [L.temp(BH * bytes, `${label}:h0`), L.temp(BH * bytes, `${label}:h1`)];
  const cping = isGru ? null : [L.temp(BH * bytes, `${label}:c0`), L.temp(BH * bytes, `${label}:c1`)];
  const hrCols = isGru && !a.resetAfter ? 2 * H : GH;
  const hr = L.temp(BH * G * bytes, `${label}:HR`);
  const rh = isGru && !a.resetAfter ? L.temp(BH * bytes, `${label}:RH`) : null;
  const hn = isGru && !a.resetAfter ? L.temp(BH * bytes, `${label}:HN`) : null;
  const threads = BH;

  for (let d = 0; d < D; d++) {
    let prevH = h0 ? {v: h0, o: d * BH} : {v: zero, o: 0};
    let prevC = isGru ? null : c0 ? {v: c0, o: d * BH} : {v: zero, o: 0};
    const backward = a.direction === 'backward' || d === 1;
    for (let step = 0; step < S; step++) {
      const t = backward ? S - 1 - step : step;
      const last = step === S - 1;
      const nextH = last ? {v: outH, o: d * BH} : {v: ping[step % 2], o: 0};
      const nextC = isGru ? null : last ? {v: outC, o: d * BH} : {v: cping[step % 2], o: 0};
      // HR = h R[d]^T + recurrentBias[d] (for GRU without resetAfter: the z and r rows only)
      matmulStep(L, {
        label: `${label}:recurrent-projection`, dataType, a: prevH.v, b: rw, c: rbias ?? undefined, y: hr,
        M: B, N: hrCols, K: H, aStrides: [H, 1], bStrides: [1, H], cStrides: [0, 1],
        offsets: {a: prevH.o, b: d * GH * H, c: d * GH, y: 0},
      });
      const u = {
        hidden: H, xw_base: (d * S + t) * B * GH, xw_row: GH, hr_base: 0, hr_row: hrCols,
        h_base: prevH.o, y_base: nextH.o, s_base: (t * D + d) * BH,
      };
      const seq = outSeq ?? undefined;
      if (!isGru) {
        lstmGatesStep(L, {
          dataType, activations: a.activations, xw, hr, c: prevC.v, p: peep, yh: nextH.v, yc: nextC.v, s: seq, threads, label,
          u: {...u, c_base: prevC.o, p_base: d * 3 * H, y_base: nextH.o, io: off.i, fo: off.f, go: off.g, oo: off.o},
        });
      } else if (a.resetAfter) {
        gruGatesStep(L, {dataType, activations: a.activations, xw, hr, h: prevH.v, y: nextH.v, s: seq, threads, label,
          u: {...u, zo: off.z, ro: off.r, no: off.n}});
      } else {
        gruResetStep(L, {dataType, activations: a.activations, xw, hr, h: prevH.v, rh, threads, label, u: {...u, ro: off.r, hro: off.r}});
        matmulStep(L, {
          label: `${label}:reset-projection`, dataType, a: rh, b: rw, c: rbias ?? undefined, y: hn,
          M: B, N: H, K: H, aStrides: [H, 1], bStrides: [1, H], cStrides: [0, 1],
          offsets: {a: 0, b: d * GH * H + 2 * H * H, c: d * GH + 2 * H, y: 0},
        });
        gruUpdateStep(L, {dataType, activations: a.activations, xw, hr, hn, h: prevH.v, y: nextH.v, s: seq, threads, label,
          u: {...u, zo: off.z, hzo: off.z, no: off.n}});
      }
      prevH = nextH;
      prevC = nextC;
    }
  }
}

const F = (min, max) => tensorLimits(FLOAT_TYPES, rankRange(min, max));

/** Operator table entries (see ops/index.js). */
export const operators = {
  gru: {
    optionsIndex: 5, method: recurrentMethod('gru'), lower: lowerRecurrent,
    limits: () => ({input: F(3, 3), weight: F(3, 3), recurrentWeight: F(3, 3), bias: F(2, 2), recurrentBias: F(2, 2),
      initialHiddenState: F(3, 3), output0: F(3, 3), output1: F(4, 4)}),
  },
  gruCell: {
    optionsIndex: 5, method: recurrentMethod('gruCell'), lower: lowerRecurrent,
    limits: () => ({input: F(2, 2), weight: F(2, 2), recurrentWeight: F(2, 2), hiddenState: F(2, 2), bias: F(1, 1),
      recurrentBias: F(1, 1), output: F(2, 2)}),
  },
  lstm: {
    optionsIndex: 5, method: recurrentMethod('lstm'), lower: lowerRecurrent,
    limits: () => ({input: F(3, 3), weight: F(3, 3), recurrentWeight: F(3, 3), bias: F(2, 2), recurrentBias: F(2, 2),
      peepholeWeight: F(2, 2), initialHiddenState: F(3, 3), initialCellState: F(3, 3), output0: F(3, 3), output1: F(3, 3), output2: F(4, 4)}),
  },
  lstmCell: {
    optionsIndex: 6, method: recurrentMethod('lstmCell'), lower: lowerRecurrent,
    limits: () => ({input: F(2, 2), weight: F(2, 2), recurrentWeight: F(2, 2), hiddenState: F(2, 2), cellState: F(2, 2),
      bias: F(1, 1), recurrentBias: F(1, 1), peepholeWeight: F(1, 1), output0: F(2, 2), output1: F(2, 2)}),
  },
};
