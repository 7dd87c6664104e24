// The page side of tests/test_builder_errors.py: one async function, evaluated on the harness page,
// that replays seed calls of every MLGraphBuilder method and calls each again with one argument
// (or one member of its options) replaced by a hostile value, collecting every exception that is
// not one the spec allows: a TypeError whose message starts with the operator's "[label]" prefix
// (errors.js), or a DOMException. A plain Error, a RangeError, or a TypeError the engine threw from
// inside our code ("Cannot read properties of undefined", "Cannot mix BigInt ...") is a defect.
//
// Argument: {seeds: [{op, description}], noOptions: [methods without MLOperatorOptions]}. A seed is a JSON graph description whose
// last operator is the call to vary; its inputs, constants and earlier operators are replayed on a
// fresh builder first (static/harness/graph_json.js addToBuilder). Returns
// {calls, threw, ops: [method names exercised], defects: [{op, where, value, error, message}]}.
async ({seeds, noOptions}) => {
  const {addToBuilder, fromBase64} = await import('/harness/graph_json.js');
  const ctx = await navigator.ml.createContext();
  const other = new MLGraphBuilder(ctx);
  const foreign = other.input('foreign', {dataType: 'float32', shape: [2, 3]});

  // Hostile values for any argument position, by name (the name goes into a defect's report).
  const hostile = (b) => ({
    'undefined': undefined, 'null': null, '-1': -1, '1.5': 1.5, '2**32': 2 ** 32, 'NaN': NaN,
    'Infinity': Infinity, '"bogus"': 'bogus', '""': '', '[]': [], '[-1]': [-1], '[2**32]': [2 ** 32],
    '[NaN]': [NaN], '[[1]]': [[1]], '[0,0,0,0,0,0,0,0,0]': new Array(9).fill(0), '{}': {},
    '-1n': -1n, '2n**70n': 2n ** 70n, 'ArrayBuffer(3)': new ArrayBuffer(3), 'Float32Array(5)': new Float32Array(5),
    'operand of another builder': foreign,
    'scalar float32': b.input('h0', {dataType: 'float32', shape: []}),
    'float32 [3]': b.input('h1', {dataType: 'float32', shape: [3]}),
    'float32 [2,1,3,1,2]': b.input('h5', {dataType: 'float32', shape: [2, 1, 3, 1, 2]}),
    'int32 [2,3]': b.input('hi', {dataType: 'int32', shape: [2, 3]}),
    'uint8 [2,3]': b.input('hu', {dataType: 'uint8', shape: [2, 3]}),
    'int64 [3]': b.input('hl', {dataType: 'int64', shape: [3]}),
    'float16 [4,3]': b.input('hh', {dataType: 'float16', shape: [4, 3]}),
    '[operand]': [b.input('hs', {dataType: 'float32', shape: [2, 3]})],
  });

  const isOptions = (v) => v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof MLOperand);
  const defects = [];
  const exercised = new Set();
  let calls = 0;
  let threw = 0;

  let takesOptions = true;  // input() and constant() take no MLOperatorOptions: their prefix is the method name
  const attempt = (b, op, args, where, valueName) => {
    calls++;
    try {
      b[op](...args);
    } catch (e) {
      threw++;
      const last = args[args.length - 1];
      const label = takesOptions && isOptions(last) && last.label === 'L' ? 'L' : null;
      const allowed = e instanceof DOMException ||
          (e instanceof TypeError && e.constructor === TypeError &&
           (label ? e.message.startsWith('[L] ') : /^\[[^\]]*\] /.test(e.message)));
      if (!allowed) {
        defects.push({op, where, value: valueName, error: e?.constructor?.name ?? typeof e, message: String(e?.message ?? e)});
      }
    }
  };

  for (const {op, description} of seeds) {
    const b = new MLGraphBuilder(ctx);
    const seedDesc = {...description, operators: description.operators.slice(0, -1)};
    const operands = addToBuilder(b, seedDesc, (name, spec) => fromBase64(spec.bytes));
    const call = description.operators[description.operators.length - 1];
    const resolve = (value) => {
      if (Array.isArray(value)) return value.map(resolve);
      if (value && typeof value === 'object') {
        if (typeof value.operand === 'string' && Object.keys(value).length === 1) return operands.get(value.operand);
        if (typeof value.bigint === 'string' && Object.keys(value).length === 1) return BigInt(value.bigint);
        if (typeof value.number === 'string' && Object.keys(value).length === 1) return Number(value.number);
        if (typeof value.bytes === 'string' && Object.keys(value).length === 1) return fromBase64(value.bytes);
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
      }
      return value;
    };
    const args = (call.args ?? []).map(resolve);
    const options = {...resolve(call.options ?? {}), label: 'L'};
    const pool = hostile(b);
    exercised.add(op);
    takesOptions = !noOptions.includes(op);

    // The seed itself must build (a seed that throws would make every variation vacuous).
    try { b[op](...args, options); } catch (e) {
      defects.push({op, where: 'the seed call', value: '', error: e?.constructor?.name, message: String(e?.message ?? e)});
      continue;
    }
    for (let i = 0; i <= args.length; i++) {
      for (const [name, value] of Object.entries(pool)) {
        const varied = [...args];
        varied[i] = value;  // i === args.length: an extra argument where options go
        attempt(b, op, i === args.length ? varied : [...varied, options], `argument ${i}`, name);
      }
    }
    for (let n = 0; n < args.length; n++) attempt(b, op, args.slice(0, n), `only ${n} arguments`, '');
    const keys = new Set([...Object.keys(options), ...(call.extraOptionKeys ?? [])]);
    keys.delete('label');
    for (const key of keys) {
      for (const [name, value] of Object.entries(pool)) {
        attempt(b, op, [...args, {...options, [key]: value}], `options.${key}`, name);
      }
    }
    // Options that are not a dictionary (WebIDL: a TypeError, no label to name).
    for (const value of [5, 'options', true]) attempt(b, op, [...args, value], 'options itself', String(value));
  }
  return {calls, threw, ops: [...exercised].sort(), defects};
}
