import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * JSON without loss of digits. Every number is kept as a LosslessNumber holding its exact source
 * text, so `12345678901234567.89` and `12.30` survive parsing, storage and forwarding unchanged.
 * Money must never pass through a float (ADR 0002).
 */
export function parseLossless(text: string): unknown {
  return parse(text);
}

/** Serializes values produced by parseLossless (LosslessNumbers are written as their source text). */
export function stringifyLossless(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text;
}

/** The exact text of a JSON number or string value: the form in which decimals are stored. */
export function decimalText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isLosslessNumber(value)) return value.value;
  if (typeof value === 'number') return String(value);
  throw new TypeError(`not a decimal: ${typeof value}`);
}

/** Raw source text of the numbers in a validation view, by parent object and key. */
const numberSources = new WeakMap<object, Map<string | number, string>>();

/**
 * A plain-JSON copy of a lossless value for schema validation: LosslessNumbers become JS numbers
 * (so `type: number`, `minimum` and friends apply) and their source text is remembered, so the
 * `x-decimal` keyword can count the digits that were really sent.
 */
export function validationView(value: unknown): unknown {
  if (isLosslessNumber(value)) return Number(value.value);
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    value.forEach((item, index) => {
      copy[index] = validationView(item);
      if (isLosslessNumber(item)) rememberSource(copy, index, item);
    });
    return copy;
  }
  if (isJsonObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      setOwn(copy, key, validationView(item));
      if (isLosslessNumber(item)) rememberSource(copy, key, item);
    }
    return copy;
  }
  return value;
}

/**
 * Whether `value` is a JSON object as parsed (not null, an array or a LosslessNumber). Unlike a
 * `value.constructor === Object` test it cannot be fooled by an own member named `constructor`.
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value);
}

/**
 * Sets `key` on `object` as an own data property, whatever the key: `object[key] = value` with
 * the key `__proto__` would replace the object's prototype instead (ADR 0015). Every copy of
 * input data goes through here or through Object.fromEntries, which defines properties too.
 */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

/** The value of an own member, never one inherited from Object.prototype (`toString`, `constructor`, ...). */
export function ownValue(object: unknown, key: string | number): unknown {
  return object !== null && typeof object === 'object' && Object.hasOwn(object, key) ? (object as Record<string | number, unknown>)[key] : undefined;
}

function rememberSource(parent: object, key: string | number, number: LosslessNumber): void {
  let sources = numberSources.get(parent);
  if (!sources) numberSources.set(parent, (sources = new Map()));
  sources.set(key, number.value);
}

/** The source text of a number inside a validation view; String(n) for numbers that had none. */
export function numberSource(parent: unknown, key: string | number | undefined, value: number): string {
  if (parent !== null && typeof parent === 'object' && key !== undefined) {
    const source = numberSources.get(parent)?.get(key);
    if (source !== undefined) return source;
  }
  return String(value);
}

export { isLosslessNumber, LosslessNumber };
