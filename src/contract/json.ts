import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';
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
 * gives, read about four times faster (issue 12): JSON.parse builds the structure and strings
 * natively, then each number is replaced by a LosslessNumber of its source text, taken in
 * document order by one scan of the text. That order is the order JSON.parse's objects list
 * their members only while no object repeats a member name (JSON.parse keeps one) and none has
 * a name that is an array index ("0", "7"), which objects list first. So the scan gives up on a
 * name that starts with a digit, holds an escape or is `__proto__`, and the copy gives up on an
 * object with fewer members than the text has: lossless-json reads those texts, and every text
 * JSON.parse refuses, so its messages stay the ones partners see.
 */
export function readLossless(text: string): LosslessRead {
  let plain: unknown;
  try {
    plain = JSON.parse(text);
  } catch {
    return { value: parse(text), distinctNames: false };
  }
  const scanned = scanMembersAndNumbers(text);
  const value = scanned && withLosslessNumbers(plain, scanned, { object: 0, number: 0 });
  return value === GAVE_UP || !scanned ? { value: parse(text), distinctNames: false } : { value, distinctNames: true };
}

interface Scanned {
  /** Members each object has in the text, objects in document order. */
  memberCounts: number[];
  /** Source text of each number, in document order. */
  numbers: string[];
}

const GAVE_UP = Symbol('gave up');
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const MINUS = 0x2d;

/**
 * One pass over text JSON.parse accepted: member counts and number texts, or undefined for a
 * member name that could change the order of members (see readLossless).
 */
function scanMembersAndNumbers(text: string): Scanned | undefined {
  const memberCounts: number[] = [];
  const numbers: string[] = [];
  // For each open container: the index of its count in memberCounts, or -1 for an array.
  const open: number[] = [];
  let expectingName = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      let end = text.indexOf('"', i + 1);
      // A quote after an odd run of backslashes is escaped: the string goes on.
      while (escapedAt(text, end)) end = text.indexOf('"', end + 1);
      if (expectingName) {
        expectingName = false;
        const first = text.charCodeAt(i + 1);
        if (first >= DIGIT_0 && first <= DIGIT_9) return undefined;
        // An escape anywhere in a name can spell a digit, a repeat or `__proto__` (`"_\u005fproto__"`).
        for (let at = i + 1; at < end; at++) if (text.charCodeAt(at) === 0x5c) return undefined;
        if (end - i === 10 && text.startsWith('__proto__', i + 1)) return undefined;
        memberCounts[open[open.length - 1]!]!++;
      }
      i = end;
    } else if (code === 0x7b) {
      open.push(memberCounts.length);
      memberCounts.push(0);
      expectingName = true;
    } else if (code === 0x5b) {
      open.push(-1);
    } else if (code === 0x7d || code === 0x5d) {
      open.pop();
      expectingName = false;
    } else if (code === 0x2c) {
      expectingName = open[open.length - 1] !== -1;
    } else if (code === MINUS || (code >= DIGIT_0 && code <= DIGIT_9)) {
      let end = i + 1;
      for (
        let next = text.charCodeAt(end);
        (next >= DIGIT_0 && next <= DIGIT_9) || next === 0x2e || next === 0x65 || next === 0x45 || next === 0x2b || next === MINUS;
        next = text.charCodeAt(++end)
      );
      numbers.push(text.slice(i, end));
      i = end - 1;
    }
  }
  return { memberCounts, numbers };
}

function escapedAt(text: string, index: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(index - 1 - backslashes) === 0x5c) backslashes++;
  return backslashes % 2 === 1;
}

/** The parsed value with its numbers replaced in document order, in place; GAVE_UP for a repeated member. */
function withLosslessNumbers(value: unknown, scanned: Scanned, next: { object: number; number: number }): unknown {
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

/** Serializes values produced by parseLossless (LosslessNumbers are written as their source text). */
export function stringifyLossless(value: unknown): string {
  const text = stringify(value);
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
 * JSON text of a parsed value in canonical form, written in one pass: every object's keys in
 * sorted order, arrays in their order, numbers by their source text. Byte for byte the text that
 * stringifyLossless gives for a copy of the value built with its keys sorted (the form E1's
 * idempotency hashes were made with), without making the copy. Such a copy is a JS object, which
 * lists array-index keys ("0", "7", "10") first in numeric order, then the others in the order
 * they were added (sorted): the same order is used here.
 */
export function canonicalJsonText<T>(value: T): JsonText<T> {
  const text = canonical(value);
  if (text === undefined) throw new TypeError('value cannot be serialized to JSON');
  return text as JsonText<T>;
}

function canonical(value: unknown): string | undefined {
  const parts: string[] = [];
  return writeCanonical(value, parts) ? parts.join('') : undefined;
}

/** Appends the canonical text of `value` to `parts`; false (nothing appended) for what JSON cannot hold. */
function writeCanonical(value: unknown, parts: string[]): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') {
    const text = JSON.stringify(value);
    if (text === undefined) return false;
    parts.push(text);
    return true;
  }
  if (isLosslessNumber(value)) {
    parts.push(value.value);
    return true;
  }
  if (Array.isArray(value)) {
    parts.push('[');
    for (let index = 0; index < value.length; index++) {
      if (index > 0) parts.push(',');
      if (!writeCanonical(value[index], parts)) parts.push('null');
    }
    parts.push(']');
    return true;
  }
  if (typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  parts.push('{');
  let first = true;
  for (const key of canonicalKeyOrder(Object.keys(record))) {
    const mark = parts.length;
    parts.push(first ? '' : ',', quotedName(key), ':');
    if (writeCanonical(record[key], parts)) first = false;
    else parts.length = mark;
  }
  parts.push('}');
  return true;
}

// Member names repeat on every request (an order's `currency`, `items`, ...): each is quoted once.
// Bounded, since the names come from partners.
const quotedNames = new Map<string, string>();
function quotedName(name: string): string {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = JSON.stringify(name);
    if (quotedNames.size < 1024) quotedNames.set(name, quoted);
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
 * A plain-JSON copy of a lossless value for schema validation: LosslessNumbers become JS numbers
 * (so `type: number`, `minimum` and friends apply) and their source text is remembered, so the
 * `x-decimal` keyword can count the digits that were really sent.
 */
export function validationView(value: unknown): unknown {
  if (isLosslessNumber(value)) return Number(value.value);
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      copy[index] = validationView(item);
      if (isLosslessNumber(item)) rememberSource(copy, index, item);
    }
    return copy;
  }
  if (isJsonObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const item = value[key];
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
 * Whether JSON text nests objects and arrays deeper than `limit`, found by one pass over the
 * characters without building anything (brackets inside strings do not count), so it is safe to
 * run on any text before a recursive parser sees it.
 */
export function nestsDeeperThan(text: string, limit = maxJsonDepth()): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > limit) return true;
    } else if (code === 0x7d || code === 0x5d) {
      depth--;
    }
  }
  return false;
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
