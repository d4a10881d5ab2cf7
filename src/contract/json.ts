import { isLosslessNumber, LosslessNumber, parse } from 'lossless-json';
import { loadDocument } from './documents.js';

/**
 * JSON without loss of digits. Every number is kept as a LosslessNumber holding its exact source
 * text, so `12345678901234567.89` and `12.30` survive parsing, storage and forwarding unchanged.
 * Money must never pass through a float (ADR 0002).
 */
export function parseLossless(text: string): unknown {
  return readLossless(text).value;
}

/** A value read by readLossless, and what the read proved about its member names. */
export interface LosslessRead {
  value: unknown;
  /**
   * True when the read proved that no object repeats a member name and none is named
   * `__proto__`; false when it did not look (the text went through lossless-json).
   */
  distinctNames: boolean;
}

/**
 * parseLossless, and whether member names were proved distinct. The same value lossless-json
 * gives, read about four times faster (ADR 0035): JSON.parse builds the structure and strings
 * natively, then each number is replaced by a LosslessNumber of its source text, taken in
 * document order from scanJson. That order is the order JSON.parse's objects list their members
 * only while no object repeats a member name (JSON.parse keeps one) and none has a name that is
 * an array index ("0", "7"), which objects list first. So a name that starts with a digit, holds
 * an escape or is `__proto__` sends the text to lossless-json, and so does an object with fewer
 * members than the text has, and every text JSON.parse refuses, so its messages stay the ones
 * partners see. `scanned`: the scan of this text the caller already made.
 */
export function readLossless(text: string, scanned?: JsonScan): LosslessRead {
  let plain: unknown;
  try {
    plain = JSON.parse(text);
  } catch {
    return { value: parse(text), distinctNames: false };
  }
  const scan = scanned ?? scanJson(text);
  const value = scan.orderUnsafe ? GAVE_UP : withLosslessNumbers(plain, scan, { object: 0, number: 0 });
  return value === GAVE_UP ? { value: parse(text), distinctNames: false } : { value, distinctNames: true };
}

/** What one pass of scanJson found in a JSON text. */
export interface JsonScan {
  /** Objects and arrays nest deeper than the limit asked for: the pass stopped there. */
  tooDeep: boolean;
  /** Members each object has in the text, objects in document order. */
  memberCounts: number[];
  /** Source text of each number, in document order. */
  numbers: string[];
  /** A member name that starts with a digit, holds an escape or is `__proto__`: it could reorder JSON.parse's members. */
  orderUnsafe: boolean;
  /** With `names`: the first member named twice in one object, or named `__proto__`, and where it is. */
  ambiguous: { path: Array<string | number>; problem: 'repeated' | '__proto__' } | undefined;
}

const GAVE_UP = Symbol('gave up');
const [QUOTE, BACKSLASH, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, COMMA, MINUS, DIGIT_0, DIGIT_9] = [
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ',',
  '-',
  '0',
  '9',
].map((character) => character.charCodeAt(0)) as [number, number, number, number, number, number, number, number, number, number];

/**
 * The one tokenizer of JSON text in the contract layer: a single pass over the characters, safe
 * on any text (it builds no value and never recurses), that measures nesting against
 * `depthLimit`, counts each object's members, cuts out each number's source text and flags member
 * names that could reorder JSON.parse's output. With `names` it also tracks every object's member
 * names (unescaped: `"a"` and `"\u0061"` are one name) to report a repeat or a `__proto__`.
 * Strings are skipped from quote to quote; a quote after an odd run of backslashes is escaped.
 */
export function scanJson(text: string, options: { depthLimit?: number; names?: boolean } = {}): JsonScan {
  const depthLimit = options.depthLimit ?? Infinity;
  const result: JsonScan = { tooDeep: false, memberCounts: [], numbers: [], orderUnsafe: false, ambiguous: undefined };
  // For each open container: the index of its count in memberCounts, or -1 for an array.
  const open: number[] = [];
  // With `names`: each open container's names so far and where the pass is in it, for messages.
  const named: Array<{ names: Set<string>; at: string | number }> | undefined = options.names ? [] : undefined;
  let expectingName = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escapedAt(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) end = length;
      if (expectingName) {
        expectingName = false;
        result.memberCounts[open[open.length - 1]!]!++;
        let escaped = false;
        for (let at = i + 1; at < end; at++) if (text.charCodeAt(at) === BACKSLASH) escaped = true;
        const first = text.charCodeAt(i + 1);
        if ((first >= DIGIT_0 && first <= DIGIT_9) || escaped || (end - i === 10 && text.startsWith('__proto__', i + 1)))
          result.orderUnsafe = true;
        if (named && result.ambiguous === undefined) {
          const container = named[named.length - 1]!;
          const name = escaped ? unescapedName(text.slice(i, end + 1)) : text.slice(i + 1, end);
          container.at = name;
          if (name === '__proto__') result.ambiguous = { path: pathOf(named), problem: '__proto__' };
          else if (container.names.has(name)) result.ambiguous = { path: pathOf(named), problem: 'repeated' };
          else container.names.add(name);
        }
      }
      i = end;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (open.length >= depthLimit) {
        result.tooDeep = true;
        return result;
      }
      if (code === OPEN_BRACE) {
        open.push(result.memberCounts.length);
        result.memberCounts.push(0);
        expectingName = true;
      } else open.push(-1);
      named?.push({ names: new Set(), at: code === OPEN_BRACE ? '' : 0 });
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      open.pop();
      named?.pop();
      expectingName = false;
    } else if (code === COMMA) {
      expectingName = open.length > 0 && open[open.length - 1] !== -1;
      const container = named?.[named.length - 1];
      if (container && typeof container.at === 'number') container.at++;
    } else if (code === MINUS || (code >= DIGIT_0 && code <= DIGIT_9)) {
      let end = i + 1;
      for (
        let next = text.charCodeAt(end);
        (next >= DIGIT_0 && next <= DIGIT_9) || next === 0x2e || next === 0x65 || next === 0x45 || next === 0x2b || next === MINUS;
        next = text.charCodeAt(++end)
      );
      result.numbers.push(text.slice(i, end));
      i = end - 1;
    }
  }
  return result;
}

function escapedAt(text: string, index: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(index - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/** A member name with escapes, unescaped; malformed escapes (the text is not JSON) keep the raw text. */
function unescapedName(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}

function pathOf(named: Array<{ at: string | number }>): Array<string | number> {
  return named.map((container) => container.at);
}

/** The parsed value with its numbers replaced in document order, in place; GAVE_UP for a repeated member. */
function withLosslessNumbers(value: unknown, scanned: JsonScan, next: { object: number; number: number }): unknown {
  if (typeof value === 'number') return new LosslessNumber(scanned.numbers[next.number++]!);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item = withLosslessNumbers(value[index], scanned, next);
      if (item === GAVE_UP) return GAVE_UP;
      value[index] = item;
    }
    return value;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length !== scanned.memberCounts[next.object++]) return GAVE_UP;
  for (const key of keys) {
    const item = withLosslessNumbers(record[key], scanned, next);
    if (item === GAVE_UP) return GAVE_UP;
    record[key] = item;
  }
  return value;
}

/**
 * Serializes values produced by parseLossless (LosslessNumbers are written as their source text),
 * and anything JSON.stringify takes (a Date by its toJSON), members in their order: the text
 * lossless-json's stringify gives, written in one pass by writeJson.
 */
export function stringifyLossless(value: unknown): string {
  const text = writeJson(value, false);
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text;
}

declare const jsonOf: unique symbol;

/**
 * JSON text of a value of type T, serialised once with stringifyLossless: the text that is hashed,
 * stored, signed and sent is this one, never a second serialisation of the same value.
 */
export type JsonText<T> = string & { readonly [jsonOf]: T };

/** Serialises a value once, keeping its type with the text. */
export function jsonText<T>(value: T): JsonText<T> {
  return stringifyLossless(value) as JsonText<T>;
}

/**
 * JSON text of an object whose last member, `name`, is already JSON text: the text jsonText gives
 * for `{ ...rest, [name]: value }`, without serialising that value a second time (an event's
 * payload is logged and forwarded as one text, ADR 0045).
 */
export function jsonTextEndingWith<T extends object, K extends keyof T & string>(
  rest: Omit<T, K>,
  name: K,
  text: JsonText<T[K]>,
): JsonText<T> {
  const head = stringifyLossless(rest);
  return `${head === '{}' ? '{' : `${head.slice(0, -1)},`}${JSON.stringify(name)}:${text}}` as JsonText<T>;
}

/**
 * JSON text of a parsed value in canonical form, written in one pass: every object's keys in
 * sorted order, arrays in their order, numbers by their source text. Byte for byte the text that
 * stringifyLossless gives for a copy of the value built with its keys sorted (the form E1's
 * idempotency hashes were made with), without making the copy. Such a copy is a JS object, which
 * lists array-index keys ("0", "7", "10") first in numeric order, then the others in the order
 * they were added (sorted): the same order is used here.
 */
export function canonicalJsonText<T>(value: T): JsonText<T> {
  const text = writeJson(value, true);
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text as JsonText<T>;
}

/**
 * The one JSON writer of lossless values: the text of `value`, each object's members in their
 * own order or (`sorted`) in canonicalKeyOrder; undefined for what JSON cannot hold (undefined,
 * a function, a symbol), which an object leaves out and an array writes as null, as
 * JSON.stringify does. Strings, numbers and member names are written by JSON.stringify itself.
 */
function writeJson(value: unknown, sorted: boolean): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (isLosslessNumber(value)) return value.value;
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index++) text += `${index > 0 ? ',' : ''}${writeJson(value[index], sorted) ?? 'null'}`;
    return `${text}]`;
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return writeJson((toJSON as () => unknown).call(value), sorted);
  if (value instanceof Boolean || value instanceof Number || value instanceof String) return JSON.stringify(value);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let text = '{';
  let first = true;
  for (const key of sorted ? canonicalKeyOrder(keys) : keys) {
    const member = writeJson(record[key], sorted);
    if (member === undefined) continue;
    text += `${first ? '' : ','}${quotedName(key)}:${member}`;
    first = false;
  }
  return `${text}}`;
}

// Member names repeat on every request (an order's `currency`, `items`, ...): each is quoted once.
// Bounded in entries and in bytes, since the names come from partners: a payload's member name
// may be as long as the 1 MiB body, and 1,024 of them, kept with their quoted text, would hold
// 2 GiB for the life of the process. The names that repeat are short.
const quotedNames = new Map<string, string>();
const MAX_REMEMBERED_NAMES = 1024;
const MAX_REMEMBERED_NAME_LENGTH = 64;
function quotedName(name: string): string {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = JSON.stringify(name);
    if (quotedNames.size < MAX_REMEMBERED_NAMES && name.length <= MAX_REMEMBERED_NAME_LENGTH) quotedNames.set(name, quoted);
  }
  return quoted;
}

const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;
// Most names start with a letter: the first character settles them without the pattern.
const isArrayIndex = (key: string) => {
  const first = key.charCodeAt(0);
  return first >= 0x30 && first <= 0x39 && ARRAY_INDEX.test(key) && Number(key) < 4294967295;
};

function canonicalKeyOrder(keys: string[]): string[] {
  const sorted = keys.sort();
  if (!sorted.some(isArrayIndex)) return sorted;
  const indexes = sorted.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b));
  return [...indexes, ...sorted.filter((key) => !isArrayIndex(key))];
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
 * A plain-JSON view of a lossless value for schema validation: LosslessNumbers become JS numbers
 * (so `type: number`, `minimum` and friends apply) and their source text is remembered, so the
 * `x-decimal` keyword can count the digits that were really sent. Only what holds a
 * LosslessNumber is copied: a member or item without one (most strings, an E2 body, a whole
 * `custom_attributes` of text) is the value itself, since the validator reads and never changes
 * what it checks (no defaults, coercion or removal: ajv.ts).
 */
export function validationView(value: unknown): unknown {
  if (isLosslessNumber(value)) return Number(value.value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const view = validationView(item);
      if (copy === undefined) {
        if (view === item) continue;
        copy = value.slice(0, index);
      }
      copy[index] = view;
      if (isLosslessNumber(item)) rememberSource(copy, index, item);
    }
    return copy ?? value;
  }
  if (isJsonObject(value)) {
    let copy: Record<string, unknown> | undefined;
    const keys = Object.keys(value);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const item = value[key];
      const view = validationView(item);
      if (copy === undefined) {
        if (view === item) continue;
        copy = {};
        for (let before = 0; before < index; before++) setOwn(copy, keys[before]!, value[keys[before]!]);
      }
      setOwn(copy, key, view);
      if (isLosslessNumber(item)) rememberSource(copy, key, item);
    }
    return copy ?? value;
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
  return object !== null && typeof object === 'object' && Object.hasOwn(object, key)
    ? (object as Record<string | number, unknown>)[key]
    : undefined;
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

/**
 * How deep objects and arrays may nest in any JSON the platform reads from a partner, a request
 * body or an answer: `x-max-json-depth` of the Platform API (ADR 0015). Every reader on the way
 * (lossless-json, the validation view, ajv, pruning, storage) walks recursively, so a 1 MiB body
 * of `[[[[...` would otherwise exhaust the stack in whichever runs first.
 */
export function maxJsonDepth(): number {
  // Read on first use, not at import: the build imports this module before it has bundled the
  // contract it reads.
  if (maxDepth === undefined) {
    const depth = loadDocument('platform')['x-max-json-depth'];
    if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 2) throw new Error('the Platform API lost x-max-json-depth');
    maxDepth = depth;
  }
  return maxDepth;
}
let maxDepth: number | undefined;

/**
 * Whether JSON text nests objects and arrays deeper than `limit`, found by scanJson without
 * building anything (brackets inside strings do not count), so it is safe to run on any text
 * before a recursive parser sees it.
 */
export function nestsDeeperThan(text: string, limit = maxJsonDepth()): boolean {
  return scanJson(text, { depthLimit: limit }).tooDeep;
}

/**
 * Why a parsed JSON value cannot be stored or passed on unchanged, or undefined: a string or
 * member name holding U+0000 (PostgreSQL cannot store it) or a lone UTF-16 surrogate (`"\ud800"`
 * is valid JSON text but no Unicode text: UTF-8 cannot encode it, so the store and every partner
 * would see U+FFFD or an error instead of what was sent).
 */
export function unstorableText(value: unknown): string | undefined {
  if (typeof value === 'string') return textProblem(value);
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = unstorableText(item);
      if (problem) return problem;
    }
    return undefined;
  }
  if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      const problem = textProblem(key) ?? unstorableText(value[key]);
      if (problem) return problem;
    }
  }
  return undefined;
}

function textProblem(text: string): string | undefined {
  if (text.includes('\0')) return 'strings must not contain the NUL character (U+0000)';
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed())
    return 'strings must be Unicode text: a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair) is not accepted';
  return undefined;
}

/** Whether JSON text can carry a string unstorableText refuses: both come only as `\u` escapes in UTF-8 text. */
export function mayHoldUnstorableText(text: string): boolean {
  return /\\u(?:0000|d[89a-f])/i.test(text);
}

export { isLosslessNumber, LosslessNumber };
