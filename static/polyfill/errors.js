/**
 * Errors as the WebNN spec names them, built in one place.
 *
 * Every message is prefixed with the operator's `[label]` (MLOperatorOptions.label, or the
 * method name when no label was given) so a failing graph can be traced to the call that made it.
 * Labels are sanitised: control characters and bidirectional overrides are dropped
 * (spec: MLOperatorOptions, advisement on displaying labels).
 */

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** @param {string|undefined} label @param {string} fallback @returns {string} `[label]` prefix */
export function prefix(label, fallback) {
  const text = (label ?? '') === '' ? fallback : String(label);
  return text ? `[${text.replace(UNSAFE, '')}] ` : '';
}

/** A TypeError whose message starts with `[label]`. */
export function typeError(label, message) {
  return new TypeError(`${label ? prefix(label, '') : ''}${message}`);
}

/**
 * A DOMException of the given spec name: 'InvalidStateError', 'OperationError',
 * 'NotSupportedError', 'UnknownError', 'DataError', 'AbortError'.
 */
export function domError(name, message, label) {
  return new DOMException(`${label ? prefix(label, '') : ''}${message}`, name);
}

/** Throws a TypeError `[label] message` unless `condition` holds. */
export function check(condition, label, message) {
  if (!condition) throw typeError(label, message);
}
