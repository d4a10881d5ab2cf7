import { isLosslessNumber, ownValue, parseLossless, stringifyLossless } from './json.js';

/** A location inside a JSON value: object keys and array indexes. */
export type JsonPath = Array<string | number>;

/** The path as the contract's validation messages spell it: `order.items[0].price`. */
export function dotted(path: JsonPath): string {
  return path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
}

/** A deep copy of a lossless (or plain) JSON value, made through its exact JSON text. */
export function copyJson<T>(value: T): T {
  return parseLossless(stringifyLossless(value)) as T;
}

/** The member at `path`: own members only, so `toString` or `constructor` of a plain object is absent. */
export function getAt(value: unknown, path: JsonPath): unknown {
  return path.reduce<unknown>((node, part) => ownValue(node, part), value);
}

export function hasAt(value: unknown, path: JsonPath): boolean {
  if (path.length === 0) return true;
  const parent = getAt(value, path.slice(0, -1));
  return parent !== null && typeof parent === 'object' && Object.hasOwn(parent, path[path.length - 1] as string | number);
}

/** A copy of `value` without the member at `path`. */
export function withoutAt<T>(value: T, path: JsonPath): T {
  const copy = copyJson(value);
  const parent = getAt(copy, path.slice(0, -1));
  if (Array.isArray(parent) && typeof path[path.length - 1] === 'number') parent.splice(path[path.length - 1] as number, 1);
  else if (parent !== null && typeof parent === 'object') delete (parent as Record<string, unknown>)[path[path.length - 1] as string];
  return copy;
}

const SLOT = '\u0000raw-json-slot\u0000';

/**
 * A copy of `value` with the JSON text `raw` at `path` (e.g. `12345678901234567890` or
 * `"1.234"`), parsed losslessly from the whole text: a number keeps exactly the digits written,
 * the way a partner's bytes arrive, never through a JS number. Missing objects are created.
 */
export function withRawAt<T>(value: T, path: JsonPath, raw: string): T {
  if (path.length === 0) return parseLossless(raw) as T;
  const copy = copyJson(value) as Record<string | number, unknown>;
  let node = copy;
  for (const part of path.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Record<string | number, unknown>;
  }
  node[path[path.length - 1]!] = SLOT;
  const text = stringifyLossless(copy);
  const slot = JSON.stringify(SLOT);
  if (text.split(slot).length !== 2) throw new Error('the raw-value slot must appear exactly once');
  return parseLossless(text.replace(slot, raw)) as T;
}

/** A copy of `value` with the plain JSON value `replacement` at `path`. */
export function withValueAt<T>(value: T, path: JsonPath, replacement: unknown): T {
  return withRawAt(value, path, stringifyLossless(replacement));
}

/** Every member path of a JSON value, parents before children (array elements included). */
export function memberPaths(value: unknown, prefix: JsonPath = []): JsonPath[] {
  if (value === null || typeof value !== 'object' || isLosslessNumber(value)) return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...prefix, key], ...memberPaths(child, [...prefix, key])]);
}
