/**
 * The page of index.html: installs the polyfill, exposes `window.runOnnxCases` (runner.js's
 * runCases) for tools/onnx_node_tests.py and sets `window.onnxNodeStatus` = {ready: true} or
 * {ready: false, error}. With ?cases=a,b it runs those cases and prints what each EP did.
 */
const out = document.getElementById('out');
try {
  await import('/polyfill/webnn.js');
  const {runCases} = await import('./runner.js');
  window.runOnnxCases = runCases;
  window.onnxNodeStatus = {ready: true};
  const names = new URLSearchParams(location.search).get('cases');
  out.textContent = 'ready';
  if (names) {
    const results = await runCases(names.split(',').filter(Boolean));
    out.textContent = results.map((r) => `${r.name}: webnn ${r.webnn.error ? r.webnn.stage + ' error: ' + r.webnn.error
      : 'ran (' + r.webnn.builds + ' WebNN graphs' + (r.webnn.frozen ? ', frozen inputs' : '') + ')'}; wasm ${
      r.wasm?.error ? 'error: ' + r.wasm.error : 'ran'}`).join('\n');
  }
} catch (error) {
  window.onnxNodeStatus = {ready: false, error: `${error?.name}: ${error?.message}`};
  out.textContent = `failed: ${window.onnxNodeStatus.error}`;
  throw error;
}
