/**
 * Webcam capture for the demo: start a stream into a <video>, grab frames, stop it.
 */

/** @returns {boolean} whether the browser offers getUserMedia here (secure context) */
export function cameraSupported() {
  return Boolean(globalThis.navigator?.mediaDevices?.getUserMedia);
}

/**
 * Starts the default camera and plays it in `video`.
 * @param {HTMLVideoElement} video
 * @returns {Promise<MediaStream>}
 * @throws (rejects) NotAllowedError (permission refused), NotFoundError (no camera),
 *   NotReadableError (camera busy) — see cameraErrorText()
 */
export async function startCamera(video) {
  const stream = await navigator.mediaDevices.getUserMedia({video: {facingMode: 'environment'}, audio: false});
  video.srcObject = stream;
  await video.play();
  return stream;
}

/**
 * Stops every track of `stream` and detaches it from `video`.
 * @param {MediaStream|null} stream
 * @param {HTMLVideoElement} video
 */
export function stopCamera(stream, video) {
  stream?.getTracks().forEach((track) => track.stop());
  video.srcObject = null;
}

/**
 * A sentence explaining why the camera could not start.
 * @param {unknown} error what getUserMedia rejected with
 * @returns {string}
 */
export function cameraErrorText(error) {
  switch (error?.name) {
    case 'NotAllowedError': return 'Camera permission was refused.';
    case 'NotFoundError':
    case 'OverconstrainedError': return 'No camera was found.';
    case 'NotReadableError': return 'The camera is in use by another application.';
    default: return `The camera could not start: ${error?.message ?? error}`;
  }
}
