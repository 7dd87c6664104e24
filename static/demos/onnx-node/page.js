/**
 * The page of index.html: installs the polyfill, exposes `window.runOnnxCases` (runner.js's
 * runCases) for tools/onnx_node_tests.py and sets `window.onnxNodeStatus` = {ready: true} or
 * {ready: false, error}. Unless ?autorun=0 (what the tools open), it then runs ?cases=a,b (default:
 * SAMPLE) through both EPs and shows, per case, whether each EP's outputs agree with ONNX's
 * expected ones (agree.js); `window.onnxNodeRun` = {rows: [{name, webnn, wasm}]} when done, each
 * EP {verdict: 'agrees' | 'differs' | 'refused' | 'failed', maxDiff?, why?}.
 */
const SAMPLE = ['test_abs', 'test_add_bcast', 'test_relu', 'test_sigmoid', 'test_softmax_example', 'test_matmul_2d',
  'test_gemm_default_single_elem_vector_bias', 'test_conv_with_strides_padding', 'test_averagepool_2d_default',
  'test_reduce_sum_keepdims_example', 'test_where_example', 'test_transpose_default'];
const out = document.getElementById('out');

function describe({verdict, maxDiff, why}) {
  if (verdict === 'agrees') return `agrees (max |diff| ${maxDiff === 0 ? '0' : maxDiff.toExponential(1)})`;
  return `${verdict}: ${why}`;
}

try {
  await import('/polyfill/webnn.js');
  const {runCases} = await import('./runner.js');
  const {agreement} = await import('./agree.js');
  window.runOnnxCases = runCases;
  window.onnxNodeStatus = {ready: true};
  const params = new URLSearchParams(location.search);
  if (params.get('autorun') === '0') {
    out.textContent = 'ready';
  } else {
    const names = (params.get('cases') ?? SAMPLE.join(',')).split(',').filter(Boolean);
    const rows = [];
    for (const [i, name] of names.entries()) {
      out.textContent = `${rows.map((r) => r.text).join('\n')}\nrunning ${name} (${i + 1} of ${names.length})…`.trimStart();
      const [result] = await runCases([name]);
      let row;
      if (result.timeout) {
        row = {name, webnn: {verdict: 'failed', why: 'timed out'}, wasm: {verdict: 'failed', why: 'timed out'}};
      } else {
        const response = await fetch(`/models/onnx-node/${name}/case.json`);
        if (!response.ok) throw new Error(`no case ${name} (/models/onnx-node/${name}/case.json: HTTP ${response.status})`);
        const meta = await response.json();
        row = {name, webnn: agreement(result.webnn, meta), wasm: agreement(result.wasm, meta)};
      }
      row.text = `${name}: WebNN EP on this polyfill ${describe(row.webnn)}; ORT's wasm EP ${describe(row.wasm)}`;
      rows.push(row);
    }
    const agreed = rows.filter((r) => r.webnn.verdict === 'agrees').length;
    out.textContent = `${agreed} of ${rows.length} cases: the WebNN EP on this polyfill agrees with ONNX's expected outputs.\n\n` +
      rows.map((r) => r.text).join('\n');
    window.onnxNodeRun = {rows: rows.map(({text, ...row}) => row)};
  }
} catch (error) {
  window.onnxNodeStatus ??= {ready: false, error: `${error?.name}: ${error?.message}`};
  window.onnxNodeRun = {error: `${error?.name}: ${error?.message}`};
  out.textContent = `failed: ${error?.name}: ${error?.message}`;
  throw error;
}
