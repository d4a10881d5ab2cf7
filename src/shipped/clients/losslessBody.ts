/**
 * The client's request-body writer: JSON text in which every number read with lossless-json
 * (a LosslessNumber, from `parseLossless`) or held as a bigint keeps its exact digits. The typed
 * client's one runtime dependency is openapi-fetch (ADR 0042), so it recognises a LosslessNumber by
 * lossless-json's shared marker (`Symbol.for`, the library's own cross-copy check) instead of
 * importing the library; everything else is written as `JSON.stringify` writes it. It must agree
 * with `stringifyLossless` (src/contract/json.ts) on every JSON value: test/contract/losslessBody.test.ts.
 */

const LOSSLESS_NUMBER = Symbol.for('lossless-json.LosslessNumber');
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The JSON text of a request body; a LosslessNumber's or bigint's digits are written as they are. */
export function losslessBody(body: unknown): string {
  const text = write(body, new Set());
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text;
}

function write(value: unknown, open: Set<object>): string | undefined {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return JSON.stringify(value) as string | undefined;
  if ((value as { [LOSSLESS_NUMBER]?: unknown })[LOSSLESS_NUMBER] === true) {
    const digits = String((value as { value?: unknown }).value);
    if (!JSON_NUMBER.test(digits)) throw new TypeError(`invalid lossless number: ${digits}`);
    return digits;
  }
  if (value instanceof Date || value instanceof Number || value instanceof String || value instanceof Boolean) {
    return JSON.stringify(value);
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return write((value as { toJSON: () => unknown }).toJSON(), open);
  }
  if (open.has(value)) throw new TypeError('a request body cannot contain itself');
  open.add(value);
  try {
    if (Array.isArray(value)) return `[${value.map((item) => write(item, open) ?? 'null').join(',')}]`;
    const members: string[] = [];
    for (const [name, member] of Object.entries(value)) {
      const text = write(member, open);
      if (text !== undefined) members.push(`${JSON.stringify(name)}:${text}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    open.delete(value);
  }
}
