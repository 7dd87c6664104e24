/**
 * WGSL generation helper: declares bindings and uniforms in one place and produces the shader
 * text, the explicit bind group layout and the uniform packing from the same declarations, so no
 * binding number or uniform offset is written by hand in an op file.
 *
 * Shader text depends only on what is declared (element types, ranks, variants), never on shapes:
 * shapes, strides and scalars travel as uniforms. The text itself is the pipeline cache key.
 *
 * Uniforms are stored as one `array<vec4<u32>, N>`; each declared uniform gets an accessor
 * function: `u_name()` for a scalar, `u_name(i)` for an array. f32/i32 values are bitcast.
 *
 * Every kernel gets `gi` (linear invocation index over the whole folded grid), `wg` (linear
 * workgroup index) and `li` (local invocation index), and the uniform `total` (number of
 * invocations that do work): with `guard` (default), invocations with gi >= total return at once.
 */

const MAX_WORKGROUPS_PER_DIM = 65535;

export class Shader {
  /** @param {string} name op name, used in labels */
  constructor(name) {
    this.name = name;
    this.bindings = [];
    this.uniformDecls = [];
    this.uniformWords = 0;
    this.helpers = [];
    this.body = '';
    this.workgroupSize = 64;
    this.guard = true;
    this.workgroupVars = [];
    this.directives = [];
    this.uniform('total');
  }

  /** Adds `enable name;` (a WGSL extension the device must have) at the top of the module. */
  enable(name) {
    this.directives.push(`enable ${name};`);
    return this;
  }

  /** Adds a module-wide `diagnostic(severity, rule);`. */
  diagnostic(severity, rule) {
    this.directives.push(`diagnostic(${severity}, ${rule});`);
    return this;
  }

  /** Declares a read-only storage array `name: array<type>`; type: f32 | i32 | u32 | vec2<u32> | vec4<f32> ... */
  read(name, type) {
    this.bindings.push({name, type, access: 'read'});
    return this;
  }

  /** Declares a read-write storage array `name: array<type>`. */
  write(name, type) {
    this.bindings.push({name, type, access: 'read_write'});
    return this;
  }

  /** Declares a read-write storage array of atomics (`array<atomic<u32>>`). */
  atomic(name) {
    this.bindings.push({name, type: 'atomic<u32>', access: 'read_write'});
    return this;
  }

  /**
   * Declares a uniform. kind: 'u32' | 'i32' | 'f32'. length 0 declares a scalar accessor `u_name()`,
   * length n > 0 an array accessor `u_name(i)` holding n values.
   */
  uniform(name, kind = 'u32', length = 0) {
    this.uniformDecls.push({name, kind, length, offset: this.uniformWords});
    this.uniformWords += Math.max(1, length);
    return this;
  }

  /** Adds helper WGSL (functions, consts) before the entry point. */
  fn(code) {
    // the same helper asked for twice (two features of one kernel needing f16_round) is declared once
    if (!this.helpers.includes(code)) this.helpers.push(code);
    return this;
  }

  /** Declares `var<workgroup> name: type;` */
  shared(name, type) {
    this.workgroupVars.push(`var<workgroup> ${name}: ${type};`);
    return this;
  }

  /** Sets the entry point body. options: {workgroupSize = 64, guard = true} */
  main(body, options = {}) {
    this.body = body;
    if (options.workgroupSize) this.workgroupSize = options.workgroupSize;
    if (options.guard !== undefined) this.guard = options.guard;
    return this;
  }

  /** @returns {string} the WGSL source */
  source() {
    const lines = [...this.directives];
    this.bindings.forEach((b, i) => {
      lines.push(`@group(0) @binding(${i}) var<storage, ${b.access}> ${b.name}: array<${b.type}>;`);
    });
    const uniformVec4s = Math.max(1, Math.ceil(this.uniformWords / 4));
    lines.push(`struct Uniforms { d: array<vec4<u32>, ${uniformVec4s}> };`);
    lines.push(`@group(0) @binding(${this.bindings.length}) var<uniform> uniforms: Uniforms;`);
    lines.push('fn u_word(i: u32) -> u32 { return uniforms.d[i / 4u][i % 4u]; }');
    for (const u of this.uniformDecls) {
      const read = (idx) => (u.kind === 'u32' ? `u_word(${idx})` : `bitcast<${u.kind}>(u_word(${idx}))`);
      if (u.length === 0) lines.push(`fn u_${u.name}() -> ${u.kind} { return ${read(`${u.offset}u`)}; }`);
      else lines.push(`fn u_${u.name}(i: u32) -> ${u.kind} { return ${read(`${u.offset}u + i`)}; }`);
    }
    lines.push(...this.workgroupVars, ...this.helpers);
    lines.push(`@compute @workgroup_size(${this.workgroupSize})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let wg = wid.x + wid.y * nwg.x + wid.z * nwg.x * nwg.y;
  let gi = wg * ${this.workgroupSize}u + li;
${this.guard ? '  if (gi >= u_total()) { return; }\n' : ''}${this.body}
}`);
    return lines.join('\n');
  }

  /** Bind group layout entries matching source(): storage bindings then the uniform buffer. */
  layoutEntries() {
    const entries = this.bindings.map((b, i) => ({
      binding: i,
      visibility: GPUShaderStage.COMPUTE,
      buffer: {type: b.access === 'read' ? 'read-only-storage' : 'storage'},
    }));
    entries.push({binding: this.bindings.length, visibility: GPUShaderStage.COMPUTE, buffer: {type: 'uniform'}});
    return entries;
  }

  /**
   * Packs uniform values into the layout of source().
   * @param {Record<string, number|number[]>} values by uniform name (`total` included)
   * @returns {ArrayBuffer} a multiple of 16 bytes
   */
  packUniforms(values) {
    const words = Math.max(4, Math.ceil(this.uniformWords / 4) * 4);
    const buffer = new ArrayBuffer(words * 4);
    const u32 = new Uint32Array(buffer);
    const i32 = new Int32Array(buffer);
    const f32 = new Float32Array(buffer);
    for (const u of this.uniformDecls) {
      const v = values[u.name];
      if (v === undefined) throw new Error(`${this.name}: uniform ${u.name} missing`);
      const list = u.length === 0 ? [v] : v;
      if (u.length > 0 && list.length > u.length) throw new Error(`${this.name}: uniform ${u.name} too long`);
      list.forEach((x, i) => {
        const at = u.offset + i;
        if (u.kind === 'f32') f32[at] = x;
        else if (u.kind === 'i32') i32[at] = x;
        else u32[at] = x;
      });
    }
    return buffer;
  }
}

/**
 * Workgroup grid for `count` workgroups, folded into 2-D/3-D when one dimension would exceed the
 * 65,535 limit (extra workgroups are cut off by the `gi >= total` guard or the kernel's own check).
 * @returns {[number, number, number]}
 */
export function foldWorkgroups(count, limit = MAX_WORKGROUPS_PER_DIM) {
  if (count <= limit) return [Math.max(1, count), 1, 1];
  const y = Math.ceil(count / limit);
  if (y <= limit) return [Math.ceil(count / y), y, 1];
  const z = Math.ceil(y / limit);
  return [limit, Math.ceil(count / (limit * z)), z];
}

/**
 * WGSL for index arithmetic over a tensor of constant rank whose dimensions and strides are
 * uniforms. Declares uniforms `${prefix}_shape` and `${prefix}_strides` of length rank, and
 * `fn ${prefix}_offset(i: u32) -> u32` mapping the row-major linear index over `${prefix}_shape`
 * to an element offset through the strides (strides may be 0 for broadcasting, or permuted).
 * For rank 0 the offset is 0.
 */
export function declareIndexer(shader, prefix, rank) {
  shader.uniform(`${prefix}_shape`, 'u32', rank);
  shader.uniform(`${prefix}_strides`, 'u32', rank);
  if (rank === 0) {
    shader.fn(`fn ${prefix}_offset(i: u32) -> u32 { return 0u; }`);
    return;
  }
  shader.fn(`fn ${prefix}_offset(i: u32) -> u32 {
  var rem = i;
  var off = 0u;
  for (var d = ${rank - 1}i; d >= 0; d--) {
    let dim = u_${prefix}_shape(u32(d));
    off += (rem % dim) * u_${prefix}_strides(u32(d));
    rem /= dim;
  }
  return off;
}`);
}
