/**
 * One pipeline cache per MLContext: compute pipelines keyed by their WGSL text (which carries no
 * shapes, see wgsl.js), created asynchronously at build time.
 */
export class PipelineCache {
  /** @param {GPUDevice} device */
  constructor(device) {
    this.device = device;
    /** @type {Map<string, Promise<{pipeline: GPUComputePipeline, layout: GPUBindGroupLayout}>>} */
    this.entries = new Map();
  }

  /**
   * The pipeline for a Shader (see wgsl.js), compiled once per distinct source.
   * @param {import('./wgsl.js').Shader} shader
   * @returns {Promise<{pipeline: GPUComputePipeline, layout: GPUBindGroupLayout}>}
   * @throws {DOMException} OperationError (through the promise) when WGSL compilation fails
   */
  get(shader) {
    const code = shader.source();
    let entry = this.entries.get(code);
    if (!entry) {
      entry = this.create(shader, code);
      this.entries.set(code, entry);
      entry.catch(() => this.entries.delete(code));
    }
    return entry;
  }

  async create(shader, code) {
    const device = this.device;
    const label = `webnn:${shader.name}`;
    const module = device.createShaderModule({label, code});
    const layout = device.createBindGroupLayout({label, entries: shader.layoutEntries()});
    try {
      const pipeline = await device.createComputePipelineAsync({
        label,
        layout: device.createPipelineLayout({label, bindGroupLayouts: [layout]}),
        compute: {module, entryPoint: 'main'},
      });
      return {pipeline, layout};
    } catch (e) {
      const info = await module.getCompilationInfo();
      const messages = info.messages.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; ');
      throw new DOMException(`[${shader.name}] pipeline creation failed: ${e.message} ${messages}`, 'OperationError');
    }
  }

  /** Number of distinct pipelines compiled (for tests and reports). */
  get size() {
    return this.entries.size;
  }
}
