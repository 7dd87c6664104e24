/**
 * CPU-context lowering (cpu/compile.js) of the recurrent operators to ONNX GRU and LSTM: gru and
 * lstm map to one node each; gruCell and lstmCell to a one-step GRU/LSTM on unsqueezed operands.
 *
 * The differences are in the operand layouts: WebNN's gate layouts zrn/rzn (GRU) and iofg/ifgo
 * (LSTM) against ONNX's fixed zrh and iofc (weights and biases are reordered by Split + Concat
 * along the gate dimension, which ORT folds for constants), WebNN's separate bias and
 * recurrentBias against ONNX's one B = [Wb, Rb], and the activation and direction names. An
 * LSTM with peepholes is unrolled (unrolledLstm): ONNX's output-gate peephole differs.
 */
/** ONNX's gate order, as positions in each WebNN layout. */
const GATE_ORDER = {zrn: null, rzn: [1, 0, 2], iofg: null, ifgo: [0, 3, 1, 2]};
const ACTIVATION = {sigmoid: 'Sigmoid', tanh: 'Tanh', relu: 'Relu'};
const DIRECTION = {forward: 'forward', backward: 'reverse', both: 'bidirectional'};

/** Reorders the gate blocks of axis 1 (G gates of H rows) into ONNX's order. */
function reorderGates(G, name, layout, gates, H) {
  const order = GATE_ORDER[layout];
  if (!order) return name;
  const parts = G.node('Split', [name, G.i64(Array(gates).fill(H))], {axis: 1}, gates);
  return G.op('Concat', order.map((k) => parts[k]), {axis: 1});
}

const unsqueeze0 = (G, name) => G.op('Unsqueeze', [name, G.i64([0])]);
const squeeze0 = (G, name) => G.op('Squeeze', [name, G.i64([0])]);

/**
 * An LSTM with peepholes, unrolled step by step: WebNN's output gate looks at the previous cell
 * state (o = act0(Wo x + Ro h + Po * c)) where ONNX's LSTM looks at the new one.
 * @param {object} v {x: [steps, B, I], w: [D, 4H, I], r: [D, 4H, H], b: [D, 4H] or '', p: [D, 3H],
 *   h0, c0: [D, B, H] or ''} in float32, gate blocks already in ONNX order (i, o, f, c)
 * @returns {string[]} [Y_h, Y_c, Y]: [D, B, H], [D, B, H], [steps, D, B, H]
 */
function unrolledLstm(G, a, v) {
  const H = a.hiddenSize;
  const D = a.numDirections;
  const act = (k, x) => G.op(ACTIVATION[a.activations[k]], [x]);
  const pick = (name, d) => G.op('Gather', [name, G.scalar('int64', d)], {axis: 0});
  const zeros = G.constant('float32', [a.batchSize, H], new Uint8Array(a.batchSize * H * 4));
  const hs = [];
  const cs = [];
  const sequence = Array.from({length: a.steps}, () => []);
  for (let d = 0; d < D; d++) {
    const wt = G.op('Transpose', [pick(v.w, d)], {perm: [1, 0]});
    const rt = G.op('Transpose', [pick(v.r, d)], {perm: [1, 0]});
    const bias = v.b ? pick(v.b, d) : '';
    const [pi, po, pf] = G.node('Split', [pick(v.p, d), G.i64([H, H, H])], {axis: 0}, 3);
    let h = v.h0 ? pick(v.h0, d) : zeros;
    let c = v.c0 ? pick(v.c0, d) : zeros;
    const backward = a.direction === 'backward' || (a.direction === 'both' && d === 1);
    for (let k = 0; k < a.steps; k++) {
      const t = backward ? a.steps - 1 - k : k;
      let gates = G.op('Add', [G.op('MatMul', [pick(v.x, t), wt]), G.op('MatMul', [h, rt])]);
      if (bias) gates = G.op('Add', [gates, bias]);
      const [gi, go, gf, gc] = G.node('Split', [gates, G.i64([H, H, H, H])], {axis: 1}, 4);
      const i = act(0, G.op('Add', [gi, G.op('Mul', [pi, c])]));
      const f = act(0, G.op('Add', [gf, G.op('Mul', [pf, c])]));
      const o = act(0, G.op('Add', [go, G.op('Mul', [po, c])]));
      c = G.op('Add', [G.op('Mul', [f, c]), G.op('Mul', [i, act(1, gc)])]);
      h = G.op('Mul', [o, act(2, c)]);
      sequence[t].push(h);
    }
    hs.push(h);
    cs.push(c);
  }
  const stack = (list) => G.op('Concat', list.map((x) => unsqueeze0(G, x)), {axis: 0});
  return [stack(hs), stack(cs), G.op('Concat', sequence.map((list) => unsqueeze0(G, stack(list))), {axis: 0})];
}

/**
 * Lowers one node to a GRU or LSTM node in float32 (float16 is cast there and back).
 * @returns {string[]} ONNX values of the node's outputs
 */
function lowerRecurrent(node, G) {
  const kind = node.op;
  const isLstm = kind.startsWith('lstm');
  const isCell = kind.endsWith('Cell');
  const gates = isLstm ? 4 : 3;
  const a = node.attrs;
  const H = a.hiddenSize;
  const D = a.numDirections;
  const dt = node.inputs[0].dataType;
  const f32 = (name) => G.cast(G.value(node.inputs[a.index[name]]), dt, 'float32');
  const operand = (name) => (a.index[name] === undefined ? null : f32(name));
  // cells: add the direction (and steps) dimension ONNX wants
  const lift = (v) => (v && isCell ? unsqueeze0(G, v) : v);
  const x = lift(operand('input'));
  const w = reorderGates(G, lift(operand('weight')), a.layout, gates, H);
  const r = reorderGates(G, lift(operand('recurrentWeight')), a.layout, gates, H);
  let b = '';
  const bias = lift(operand('bias'));
  const recurrentBias = lift(operand('recurrentBias'));
  if (bias || recurrentBias) {
    const zeros = G.constant('float32', [D, gates * H], new Uint8Array(D * gates * H * 4));
    b = G.op('Concat', [bias ? reorderGates(G, bias, a.layout, gates, H) : zeros,
      recurrentBias ? reorderGates(G, recurrentBias, a.layout, gates, H) : zeros], {axis: 1});
  }
  const h0 = isCell ? lift(operand('hiddenState')) : operand('initialHiddenState') ?? '';
  const attrs = {
    hidden_size: H,
    direction: DIRECTION[a.direction],
    activations: Array(D).fill(a.activations.map((n) => ACTIVATION[n])).flat(),
  };
  let outs;
  if (isLstm) {
    const c0 = isCell ? lift(operand('cellState')) : operand('initialCellState') ?? '';
    const p = lift(operand('peepholeWeight'));
    outs = p ? unrolledLstm(G, a, {x, w, r, b: b && G.op('Add', G.node('Split', [b, G.i64([gates * H, gates * H])], {axis: 1}, 2)), p, h0, c0})
      : G.node('LSTM', [x, w, r, b, '', h0, c0], attrs, 3);
    if (p) outs = [outs[2], outs[0], outs[1]];
  } else {
    outs = G.node('GRU', [x, w, r, b, '', h0], {...attrs, linear_before_reset: a.resetAfter ? 1 : 0}, 2);
  }
  // ONNX: Y [steps, D, B, H], Y_h [D, B, H] (, Y_c); WebNN: hidden (, cell) (, sequence)
  const [y, yh, yc] = outs;
  const states = isLstm ? [yh, yc] : [yh];
  const results = isCell ? states.map((s) => squeeze0(G, s)) : states;
  if (a.returnSequence) results.push(y);
  return results.map((v) => G.cast(v, 'float32', dt));
}

/** Lowerings by WebNN operator name. */
export const RECURRENT_LOWERINGS = {gru: lowerRecurrent, lstm: lowerRecurrent, gruCell: lowerRecurrent, lstmCell: lowerRecurrent};
