// The page function of tools/gpu_features.py (Playwright's page.evaluate): the adapter's facts,
// the f16 check, the subgroup-matrix and f32 product timings and the streaming reads.
async ({size, reps, bandwidth, products}) => {
  const adapter = await navigator.gpu?.requestAdapter({powerPreference: 'high-performance'});
  if (!adapter) return {adapter: null};
  const info = adapter.info;
  const out = {
    adapter: {vendor: info.vendor, architecture: info.architecture, device: info.device,
              description: info.description, isFallbackAdapter: info.isFallbackAdapter,
              subgroupMinSize: info.subgroupMinSize, subgroupMaxSize: info.subgroupMaxSize},
    features: [...adapter.features].sort(),
    // GPUSubgroupMatrixConfig's fields are getters: name them (spreading gives {})
    matrixConfigs: [...(info.subgroupMatrixConfigs ?? [])].map((c) => ({
      componentType: c.componentType, resultComponentType: c.resultComponentType, M: c.M, N: c.N, K: c.K})),
  };
  const wanted = ['shader-f16', 'timestamp-query', 'subgroups', 'chromium-experimental-subgroup-matrix'];
  // the adapter's buffer limits: the streaming reads go up to 1 GiB (the default limits stop at 256 MiB)
  const device = await adapter.requestDevice({requiredFeatures: wanted.filter((f) => adapter.features.has(f)),
    requiredLimits: {maxBufferSize: adapter.limits.maxBufferSize,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize}});
  const errors = [];
  device.addEventListener('uncapturederror', (e) => errors.push(e.error.message));
  const mk = (bytes, usage) => device.createBuffer({size: bytes, usage});
  const S = GPUBufferUsage.STORAGE, CS = GPUBufferUsage.COPY_SRC, CD = GPUBufferUsage.COPY_DST;

  async function readBack(buffer, bytes) {
    const staging = mk(bytes, GPUBufferUsage.MAP_READ | CD);
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const copy = staging.getMappedRange().slice(0);
    staging.destroy();
    return copy;
  }

  async function compileChecked(code) {
    const module = device.createShaderModule({code});
    const {messages} = await module.getCompilationInfo();
    const bad = messages.filter((m) => m.type === 'error').map((m) => `${m.lineNum}:${m.linePos} ${m.message}`);
    if (bad.length) throw new Error(bad.join('; '));
    return module;
  }

  // shader-f16: y = x * 0.5h + 1.0h in f16 for x = 0..63, checked exactly
  if (device.features.has('shader-f16')) {
    try {
      const module = await compileChecked(`enable f16;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let x = f16(g.x); y[g.x] = f32(x * 0.5h + 1.0h);
}`);
      const buf = mk(256, S | CS);
      const pipe = device.createComputePipeline({layout: 'auto', compute: {module, entryPoint: 'main'}});
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipe);
      pass.setBindGroup(0, device.createBindGroup({layout: pipe.getBindGroupLayout(0), entries: [{binding: 0, resource: {buffer: buf}}]}));
      pass.dispatchWorkgroups(1);
      pass.end();
      device.queue.submit([enc.finish()]);
      const y = new Float32Array(await readBack(buf, 256));
      out.f16Shader = y.every((v, i) => v === i * 0.5 + 1) ? 'ran, values exact' : `wrong values ${y.slice(0, 4)}`;
    } catch (e) { out.f16Shader = `failed: ${e.message}`; }
  } else {
    out.f16Shader = 'no shader-f16 on the device';
  }

  // products: C[M,N] = A[M,K] B[K,N], row-major, timed by timestamp queries
  const n = size;
  const timestamps = device.features.has('timestamp-query');
  async function timeProduct(name, code, elemBytes, resultBytes, groups, fill, check) {
    const entry = {name};
    try {
      const module = await compileChecked(code);
      const pipe = device.createComputePipeline({layout: 'auto', compute: {module, entryPoint: 'main'}});
      const a = mk(n * n * elemBytes, S | CD), b = mk(n * n * elemBytes, S | CD), c = mk(n * n * resultBytes, S | CS);
      const [ha, hb] = fill();
      device.queue.writeBuffer(a, 0, ha);
      device.queue.writeBuffer(b, 0, hb);
      const bg = device.createBindGroup({layout: pipe.getBindGroupLayout(0), entries: [
        {binding: 0, resource: {buffer: a}}, {binding: 1, resource: {buffer: b}}, {binding: 2, resource: {buffer: c}}]});
      const qs = timestamps ? device.createQuerySet({type: 'timestamp', count: 2}) : null;
      const resolve = timestamps ? mk(16, GPUBufferUsage.QUERY_RESOLVE | CS) : null;
      const ms = [];
      for (let r = 0; r < reps + 3; r++) {
        const enc = device.createCommandEncoder();
        const pass = enc.beginComputePass(qs ? {timestampWrites: {querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1}} : {});
        pass.setPipeline(pipe);
        pass.setBindGroup(0, bg);
        pass.dispatchWorkgroups(...groups);
        pass.end();
        if (qs) enc.resolveQuerySet(qs, 0, 2, resolve, 0);
        const t0 = performance.now();
        device.queue.submit([enc.finish()]);
        if (qs) {
          const t = new BigUint64Array(await readBack(resolve, 16));
          if (r >= 3) ms.push(Number(t[1] - t[0]) / 1e6);
        } else {
          await device.queue.onSubmittedWorkDone();
          if (r >= 3) ms.push(performance.now() - t0);
        }
      }
      ms.sort((x, y) => x - y);
      entry.ms = ms[ms.length >> 1];
      entry.tflops = (2 * n * n * n) / (entry.ms * 1e-3) / 1e12;
      entry.timing = qs ? 'timestamp-query' : 'onSubmittedWorkDone';
      entry.maxRelError = check(await readBack(c, n * n * resultBytes), ha, hb);
      for (const x of [a, b, c]) x.destroy();
    } catch (e) { entry.error = e.message; }
    return entry;
  }

  // values in [-1, 1) with few bits, so that f16 holds them exactly; sampled reference in float64
  const f16Bits = (v) => {
    // v = k / 64 with |k| < 64: exact in binary16
    if (v === 0) return 0;
    const s = v < 0 ? 0x8000 : 0, x = Math.abs(v);
    const e = Math.floor(Math.log2(x));
    return s | ((e + 15) << 10) | Math.round((x / 2 ** e - 1) * 1024);
  };
  const value = (i) => (((i * 2654435761) >>> 0) % 128 - 64) / 64;
  function sample(getC, ha, hb) {
    let worst = 0;
    for (let s = 0; s < 64; s++) {
      const i = (s * 977) % n, j = (s * 613 + 5) % n;
      let ref = 0, mag = 0;
      for (let k = 0; k < n; k++) { const p = ha(i * n + k) * hb(k * n + j); ref += p; mag += Math.abs(p); }
      worst = Math.max(worst, Math.abs(getC(i * n + j) - ref) / Math.max(mag, 1e-30));
    }
    return worst;
  }

  // streaming reads: a buffer of `mib` MiB, filled on the GPU with hashed words (or zeros: a
  // GPU that compresses data in memory reads zeros faster), read once as vec4<u32> by a
  // grid-stride loop of 1024 x 256 invocations; GB/s of the bytes read, from timestamps
  out.bandwidth = [];
  for (const mib of bandwidth) {
    for (const fill of ['hashed', 'zeros']) {
      const entry = {mib, fill};
      try {
        const words = mib * 262144;
        const buf = mk(words * 4, S), sink = mk(1024 * 256 * 4, S | CS);
        const fillModule = await compileChecked(`@group(0) @binding(0) var<storage, read_write> X: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  for (var i = g.x; i < ${words}u; i += nw.x * 256u) {
    var h = i * 2654435761u; h ^= h >> 15u; h *= 2246822519u; h ^= h >> 13u;
    X[i] = ${fill === 'zeros' ? '0u' : 'h'};
  }
}`);
        const readModule = await compileChecked(`@group(0) @binding(0) var<storage, read> X: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> Y: array<u32>;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  var acc = vec4<u32>();
  for (var i = g.x; i < ${words / 4}u; i += ${1024 * 256}u) { acc ^= X[i]; }
  Y[g.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}`);
        const fillPipe = device.createComputePipeline({layout: 'auto', compute: {module: fillModule, entryPoint: 'main'}});
        const readPipe = device.createComputePipeline({layout: 'auto', compute: {module: readModule, entryPoint: 'main'}});
        const fillBg = device.createBindGroup({layout: fillPipe.getBindGroupLayout(0), entries: [{binding: 0, resource: {buffer: buf}}]});
        const readBg = device.createBindGroup({layout: readPipe.getBindGroupLayout(0), entries: [
          {binding: 0, resource: {buffer: buf}}, {binding: 1, resource: {buffer: sink}}]});
        let enc = device.createCommandEncoder();
        let pass = enc.beginComputePass();
        pass.setPipeline(fillPipe); pass.setBindGroup(0, fillBg); pass.dispatchWorkgroups(4096); pass.end();
        device.queue.submit([enc.finish()]);
        const qs = device.createQuerySet({type: 'timestamp', count: 2});
        const resolve = mk(16, GPUBufferUsage.QUERY_RESOLVE | CS);
        const ms = [];
        for (let r = 0; r < reps + 3; r++) {
          enc = device.createCommandEncoder();
          pass = enc.beginComputePass({timestampWrites: {querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1}});
          pass.setPipeline(readPipe); pass.setBindGroup(0, readBg); pass.dispatchWorkgroups(1024); pass.end();
          enc.resolveQuerySet(qs, 0, 2, resolve, 0);
          device.queue.submit([enc.finish()]);
          const t = new BigUint64Array(await readBack(resolve, 16));
          if (r >= 3) ms.push(Number(t[1] - t[0]) / 1e6);
        }
        ms.sort((x, y) => x - y);
        entry.ms = ms[ms.length >> 1];
        entry.gbps = words * 4 / (entry.ms * 1e-3) / 1e9;
        // the same read 20 times in one pass: the GPU kept busy, no idle gap to clock down in
        const batched = [];
        for (let r = 0; r < 5; r++) {
          enc = device.createCommandEncoder();
          pass = enc.beginComputePass({timestampWrites: {querySet: qs, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1}});
          pass.setPipeline(readPipe); pass.setBindGroup(0, readBg);
          for (let i = 0; i < 20; i++) pass.dispatchWorkgroups(1024);
          pass.end();
          enc.resolveQuerySet(qs, 0, 2, resolve, 0);
          device.queue.submit([enc.finish()]);
          const t = new BigUint64Array(await readBack(resolve, 16));
          batched.push(Number(t[1] - t[0]) / 1e6 / 20);
        }
        batched.sort((x, y) => x - y);
        entry.batchedMs = batched[batched.length >> 1];
        entry.batchedGbps = words * 4 / (entry.batchedMs * 1e-3) / 1e9;
        buf.destroy(); sink.destroy();
      } catch (e) { entry.error = e.message; }
      out.bandwidth.push(entry);
    }
  }

  out.products = [];
  if (!products) { out.errors = errors; device.destroy(); return out; }
  // f32 baseline: 64x64 tiles, 256 invocations each computing 4x4, through workgroup memory
  out.products.push(await timeProduct('f32 tiled 64x64 (baseline)', `
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
const n = ${n}u;
var<workgroup> As: array<array<f32, 64>, 16>;
var<workgroup> Bs: array<array<f32, 64>, 16>;
@compute @workgroup_size(16, 16) fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
  var acc: array<array<f32, 4>, 4>;
  let r0 = wg.y * 64u; let c0 = wg.x * 64u; let t = l.y * 16u + l.x;
  for (var k0 = 0u; k0 < n; k0 += 16u) {
    for (var q = 0u; q < 4u; q++) {
      let e = t + q * 256u;
      As[e % 16u][e / 16u] = A[(r0 + e / 16u) * n + k0 + e % 16u];
      Bs[e / 64u][e % 64u] = B[(k0 + e / 64u) * n + c0 + e % 64u];
    }
    workgroupBarrier();
    for (var k = 0u; k < 16u; k++) {
      for (var i = 0u; i < 4u; i++) { for (var j = 0u; j < 4u; j++) {
        acc[i][j] += As[k][l.y * 4u + i] * Bs[k][l.x * 4u + j];
      } }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i++) { for (var j = 0u; j < 4u; j++) {
    C[(r0 + l.y * 4u + i) * n + c0 + l.x * 4u + j] = acc[i][j];
  } }
}`, 4, 4, [n / 64, n / 64, 1],
    () => [Float32Array.from({length: n * n}, (_, i) => value(i)), Float32Array.from({length: n * n}, (_, i) => value(i + 7))],
    (buf, ha, hb) => { const c = new Float32Array(buf); return sample((i) => c[i], (i) => ha[i], (i) => hb[i]); }));

  for (const cfg of out.matrixConfigs.filter((c) => c.componentType === 'f16')) {
    const {M, N, K, resultComponentType: rt} = cfg;
    // one subgroup a workgroup; it computes 2 x 4 result matrices (2M rows x 4N columns),
    // loading its operands straight from storage (the L1/L2 caches serve the reuse)
    const TM = 2, TN = 4, rows = TM * M, cols = TN * N;
    if (n % rows || n % cols || n % K) { out.products.push({name: `f16 ${M}x${N}x${K}`, error: 'size not a multiple'}); continue; }
    const accs = [], loads = [], mmas = [], stores = [];
    for (let i = 0; i < TM; i++) loads.push(`let a${i} = subgroupMatrixLoad<subgroup_matrix_left<f16, ${K}, ${M}>>(&A, (r0 + ${i * M}u) * n + k, false, n);`);
    for (let j = 0; j < TN; j++) loads.push(`let b${j} = subgroupMatrixLoad<subgroup_matrix_right<f16, ${N}, ${K}>>(&B, k * n + c0 + ${j * N}u, false, n);`);
    for (let i = 0; i < TM; i++) for (let j = 0; j < TN; j++) {
      accs.push(`var c${i}${j} = subgroup_matrix_result<${rt}, ${N}, ${M}>();`);
      mmas.push(`c${i}${j} = subgroupMatrixMultiplyAccumulate(a${i}, b${j}, c${i}${j});`);
      stores.push(`subgroupMatrixStore(&C, (r0 + ${i * M}u) * n + c0 + ${j * N}u, c${i}${j}, false, n);`);
    }
    const sg = out.adapter.subgroupMaxSize || 32;
    const code = `enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> A: array<f16>;
@group(0) @binding(1) var<storage, read> B: array<f16>;
@group(0) @binding(2) var<storage, read_write> C: array<${rt}>;
const n = ${n}u;
@compute @workgroup_size(${sg}) fn main(@builtin(workgroup_id) wg: vec3<u32>) {
  let r0 = wg.y * ${rows}u; let c0 = wg.x * ${cols}u;
  ${accs.join('\n  ')}
  for (var k = 0u; k < n; k += ${K}u) {
    ${loads.join('\n    ')}
    ${mmas.join('\n    ')}
  }
  ${stores.join('\n  ')}
}`;
    const half = (buf) => rt === 'f16' ? new Uint16Array(buf) : new Float32Array(buf);
    const fromHalf = (h) => { const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
      return e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15); };
    out.products.push(await timeProduct(`f16 subgroup matrix ${M}x${N}x${K} -> ${rt}`, code, 2, rt === 'f16' ? 2 : 4, [n / cols, n / rows, 1],
      () => [Uint16Array.from({length: n * n}, (_, i) => f16Bits(value(i))), Uint16Array.from({length: n * n}, (_, i) => f16Bits(value(i + 7)))],
      (buf, ha, hb) => { const c = half(buf); const get = rt === 'f16' ? (i) => fromHalf(c[i]) : (i) => c[i];
        return sample(get, (i) => fromHalf(ha[i]), (i) => fromHalf(hb[i])); }));
  }
  out.errors = errors;
  device.destroy();
  return out;
}
