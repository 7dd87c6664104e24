/**
 * What the kernel choices of the matrix and row kernels need to know about the adapter.
 */

/**
 * Whether the context runs on a CPU implementation of WebGPU (SwiftShader), where workgroup
 * barriers are expensive and one invocation per output beats cooperative workgroups.
 * @param {object} ctx context slots (adapterInfo; the tuning switch `adapterInfo` replaces it)
 * @returns {boolean}
 */
export function isSoftwareAdapter(ctx) {
  const info = ctx.tuning?.adapterInfo ?? ctx.adapterInfo;
  return Boolean(info && (info.isFallbackAdapter || info.architecture === 'swiftshader' || /swiftshader/i.test(info.description ?? '')));
}
