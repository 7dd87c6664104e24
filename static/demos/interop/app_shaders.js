/**
 * The application's own WGSL kernels for the interop experiment, written as an application would
 * (plain WebGPU, no WebNN): a tiled 3x3 conv2d with bias, element-wise add, and relu. All float32.
 *
 * Layouts: input X [N, C, H, W] (NCHW), filter Wt [O, C, 3, 3] (OIHW), bias B [O], output
 * Y [N, O, H, W]; stride 1, dilation 1, padding 1 on every side ("same" output size), as
 * WebNN conv2d(x, w, {bias, padding: [1, 1, 1, 1]}) computes it.
 *
 * Tiling: a 16x16 workgroup computes a 16x16 block of output pixels for OC_BLOCK = 8 output
 * channels of one batch item. It walks the input channels C_BLOCK = 4 at a time, staging an 18x18
 * input patch per channel (the tile plus its 1-pixel halo) and the 8 x 4 x 9 filter taps in
 * workgroup memory, so each input value read from global memory feeds 9 x 8 multiply-adds.
 * Sizes travel in a uniform buffer, so one pipeline serves every shape.
 */

const TILE = 16;
const OC_BLOCK = 8;
const MAX_GROUPS = 65535;

const CONV2D_WGSL = /* wgsl */ `
struct Params { n: u32, c: u32, h: u32, w: u32, o: u32, oc_blocks: u32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> Wt: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

const TILE = ${TILE}u;
const HALO = ${TILE + 2}u;
const PATCH = ${(TILE + 2) * (TILE + 2)}u;
const C_BLOCK = 4u;
const OC_BLOCK = ${OC_BLOCK}u;
var<workgroup> xs: array<f32, ${4 * (TILE + 2) * (TILE + 2)}>;
var<workgroup> ws: array<f32, ${OC_BLOCK * 4 * 9}>;

@compute @workgroup_size(${TILE}, ${TILE}, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let batch = wg.z / p.oc_blocks;
  let oc0 = (wg.z % p.oc_blocks) * OC_BLOCK;
  let x0 = i32(wg.x * TILE) - 1;
  let y0 = i32(wg.y * TILE) - 1;
  var acc: array<f32, ${OC_BLOCK}>;
  for (var c0 = 0u; c0 < p.c; c0 += C_BLOCK) {
    for (var k = li; k < C_BLOCK * PATCH; k += TILE * TILE) {
      let ch = c0 + k / PATCH;
      let r = k % PATCH;
      let iy = y0 + i32(r / HALO);
      let ix = x0 + i32(r % HALO);
      var v = 0.0;
      if (ch < p.c && iy >= 0 && iy < i32(p.h) && ix >= 0 && ix < i32(p.w)) {
        v = X[((batch * p.c + ch) * p.h + u32(iy)) * p.w + u32(ix)];
      }
      xs[k] = v;
    }
    for (var k = li; k < OC_BLOCK * C_BLOCK * 9u; k += TILE * TILE) {
      let oc = oc0 + k / (C_BLOCK * 9u);
      let r = k % (C_BLOCK * 9u);
      let ch = c0 + r / 9u;
      var v = 0.0;
      if (oc < p.o && ch < p.c) { v = Wt[(oc * p.c + ch) * 9u + r % 9u]; }
      ws[k] = v;
    }
    workgroupBarrier();
    for (var cc = 0u; cc < C_BLOCK; cc++) {
      for (var ky = 0u; ky < 3u; ky++) {
        for (var kx = 0u; kx < 3u; kx++) {
          let xv = xs[cc * PATCH + (lid.y + ky) * HALO + lid.x + kx];
          let tap = cc * 9u + ky * 3u + kx;
          for (var oo = 0u; oo < OC_BLOCK; oo++) {
            acc[oo] = fma(xv, ws[oo * C_BLOCK * 9u + tap], acc[oo]);
          }
        }
      }
    }
    workgroupBarrier();
  }
  let ox = wg.x * TILE + lid.x;
  let oy = wg.y * TILE + lid.y;
  if (ox >= p.w || oy >= p.h) { return; }
  for (var oo = 0u; oo < OC_BLOCK; oo++) {
    let oc = oc0 + oo;
    if (oc < p.o) { Y[((batch * p.o + oc) * p.h + oy) * p.w + ox] = acc[oo] + B[oc]; }
  }
}`;

/** One invocation per element; the grid is folded into 2-D past 65,535 workgroups. */
function elementwiseWgsl(inputs, expr) {
  const reads = inputs.map((name, i) => `@group(0) @binding(${i}) var<storage, read> ${name}: array<f32>;`).join('\n');
  return /* wgsl */ `
${reads}
@group(0) @binding(${inputs.length}) var<storage, read_write> Y: array<f32>;
@group(0) @binding(${inputs.length + 1}) var<uniform> count: vec4<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * 256u;
  if (i >= count.x) { return; }
  Y[i] = ${expr};
}`;
}

/** WebNN's add. */
const ADD_WGSL = elementwiseWgsl(['A', 'B'], 'A[i] + B[i]');
/** WebNN's relu: max(x, 0), NaN stays NaN. */
const RELU_WGSL = elementwiseWgsl(['X'], 'select(X[i], 0.0, X[i] < 0.0)');

/**
 * The application's kernels on one GPUDevice. Create once (pipelines compile here), then encode
 * dispatches into the application's own compute passes.
 */
export class AppKernels {
  /**
   * @param {GPUDevice} device
   * @returns {Promise<AppKernels>}
   * @throws (rejects) GPUPipelineError when a shader does not compile
   */
  static async create(device) {
    const make = (code, label) => device.createComputePipelineAsync({
      label, layout: 'auto', compute: {module: device.createShaderModule({label, code}), entryPoint: 'main'},
    });
    const [conv2d, add, relu] = await Promise.all([
      make(CONV2D_WGSL, 'app:conv2d'), make(ADD_WGSL, 'app:add'), make(RELU_WGSL, 'app:relu')]);
    return new AppKernels(device, {conv2d, add, relu});
  }

  constructor(device, pipelines) {
    this.device = device;
    this.pipelines = pipelines;
  }

  /**
   * A uniform buffer holding `words` (u32), for the `p`/`count` bindings.
   * @param {number[]} words
   * @returns {GPUBuffer}
   */
  uniforms(words, label) {
    const data = new Uint32Array(Math.max(4, Math.ceil(words.length / 4) * 4));
    data.set(words);
    const buffer = this.device.createBuffer({label, size: data.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST});
    this.device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  }

  /**
   * Prepares a conv2d dispatch (bind group and grid), to encode each iteration with `encode`.
   * @param {{x: GPUBuffer, w: GPUBuffer, b: GPUBuffer, y: GPUBuffer}} buffers float32 NCHW/OIHW/[O]/NCHW
   * @param {{n: number, c: number, h: number, w: number, o: number}} size
   * @returns {{bindGroup: GPUBindGroup, pipeline: GPUComputePipeline, grid: number[], params: GPUBuffer}}
   */
  conv2d({x, w, b, y}, {n, c, h, w: width, o}) {
    const ocBlocks = Math.ceil(o / OC_BLOCK);
    const params = this.uniforms([n, c, h, width, o, ocBlocks, 0, 0], 'app:conv2d params');
    const pipeline = this.pipelines.conv2d;
    const bindGroup = this.device.createBindGroup({
      label: 'app:conv2d', layout: pipeline.getBindGroupLayout(0),
      entries: [x, w, b, y, params].map((buffer, binding) => ({binding, resource: {buffer}})),
    });
    const grid = [Math.ceil(width / TILE), Math.ceil(h / TILE), n * ocBlocks];
    if (grid[2] > MAX_GROUPS) throw new RangeError(`conv2d: batch x output-channel blocks ${grid[2]} exceeds ${MAX_GROUPS}`);
    return {bindGroup, pipeline, grid, params};
  }

  /**
   * Prepares Y = A + B (float32, same element count `count`).
   * @returns {{bindGroup: GPUBindGroup, pipeline: GPUComputePipeline, grid: number[], params: GPUBuffer}}
   */
  add(a, b, y, count) {
    return this.elementwise(this.pipelines.add, [a, b, y], count, 'app:add');
  }

  /**
   * Prepares Y = relu(X) (float32, `count` elements).
   * @returns {{bindGroup: GPUBindGroup, pipeline: GPUComputePipeline, grid: number[], params: GPUBuffer}}
   */
  relu(x, y, count) {
    return this.elementwise(this.pipelines.relu, [x, y], count, 'app:relu');
  }

  elementwise(pipeline, buffers, count, label) {
    const params = this.uniforms([count, 0, 0, 0], `${label} count`);
    const groups = Math.ceil(count / 256);
    const grid = groups <= MAX_GROUPS ? [groups, 1, 1] : [MAX_GROUPS, Math.ceil(groups / MAX_GROUPS), 1];
    return this.rebind({pipeline, grid, params, label}, buffers);
  }

  /**
   * The same prepared element-wise dispatch over other storage buffers (a new bind group; the
   * grid and uniform buffer are shared), e.g. for a GPUBuffer that exportToGPU() just returned.
   * @param {{pipeline, grid, params, label}} prepared from add() or relu()
   * @param {GPUBuffer[]} buffers inputs then output, as add()/relu() take them
   * @returns {{bindGroup: GPUBindGroup, pipeline: GPUComputePipeline, grid: number[], params: GPUBuffer}}
   */
  rebind({pipeline, grid, params, label}, buffers) {
    const bindGroup = this.device.createBindGroup({
      label, layout: pipeline.getBindGroupLayout(0),
      entries: [...buffers, params].map((buffer, binding) => ({binding, resource: {buffer}})),
    });
    return {bindGroup, pipeline, grid, params, label};
  }

  /**
   * Encodes prepared dispatches, in order, into one compute pass of `encoder`.
   * @param {GPUCommandEncoder} encoder
   * @param {{bindGroup, pipeline, grid}[]} dispatches
   */
  static encode(encoder, dispatches, label = 'app') {
    const pass = encoder.beginComputePass({label});
    for (const d of dispatches) {
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.bindGroup);
      pass.dispatchWorkgroups(...d.grid);
    }
    pass.end();
  }
}
