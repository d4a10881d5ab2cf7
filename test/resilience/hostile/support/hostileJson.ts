import fc from 'fast-check';
import type { ApiName } from '../../../../src/contract/documents.js';
import { isJsonObject, isLosslessNumber } from '../../../../src/contract/json.js';
import { getAt, memberPaths, type JsonPath } from '../../../../src/contract/jsonPath.js';
import { effective } from '../../support/contractSchema.js';

/**
 * Structure-aware hostile JSON: edits applied to a valid body at random places of its own
 * structure, written out as text by a serializer of our own (so a member named `__proto__`, a
 * repeated member or a number with any digits and exponent can be sent at all).
 */

/** Every name Object.prototype has (`__proto__`, `constructor`, `toString`, `hasOwnProperty`, ...). */
export const PROTOTYPE_NAMES: readonly string[] = Object.getOwnPropertyNames(Object.prototype);

/** A member edit at one object of the body: the members of that object, rewritten. */
export interface Edit {
  /** The object whose members change. */
  at: JsonPath;
  members(entries: Array<[string, string]>): Array<[string, string]>;
}

/** The JSON text of `value` with `edit` applied; numbers keep their exact text. */
export function render(value: unknown, edit?: Edit, path: JsonPath = []): string {
  if (isLosslessNumber(value)) return value.value;
  if (Array.isArray(value)) return `[${value.map((item, index) => render(item, edit, [...path, index])).join(',')}]`;
  if (isJsonObject(value)) {
    let entries = Object.entries(value).map(([key, item]): [string, string] => [JSON.stringify(key), render(item, edit, [...path, key])]);
    if (edit && samePath(edit.at, path)) entries = edit.members(entries);
    return `{${entries.map(([key, text]) => `${key}:${text}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function samePath(a: JsonPath, b: JsonPath): boolean {
  return a.length === b.length && a.every((part, index) => part === b[index]);
}

/** Paths of every object in `value`, the body itself first. */
export function objectPaths(value: unknown): JsonPath[] {
  return [[], ...memberPaths(value).filter((path) => isJsonObject(getAt(value, path)))];
}

/** Paths of every member holding a string, number, boolean or null. */
export function leafPaths(value: unknown): JsonPath[] {
  return memberPaths(value).filter((path) => {
    const here = getAt(value, path);
    return !isJsonObject(here) && !Array.isArray(here);
  });
}

/** A hostile edit and what it is, for the failure report. */
export interface Hostile {
  label: string;
  text: string;
  /** The edit necessarily makes the body invalid (a `__proto__` or repeated member). */
  mustRefuse: boolean;
  /** The body the same edit means without the hostile member itself, for the validity oracle. */
  plain: unknown;
  /** Where the injected member sits, and a sentinel its value carries (prototype injections). */
  injected?: { at: JsonPath; sentinel: string };
  /** What the refusal's message must say, when `mustRefuse`; by default that a name is repeated or `__proto__`. */
  refusal?: RegExp;
}

const smallJson = fc.jsonValue({ maxDepth: 2, depthSize: 'small' });

/**
 * A member named after a member of Object.prototype, put into any object of the body at any
 * position. Its value is arbitrary JSON, or (half the time) one of its parent's own members moved
 * inside it: the body then still holds that member, but only "through" the injected name, which
 * is exactly what a reader that lets `__proto__` set a prototype would see as the parent's own.
 */
export function prototypeInjection(base: unknown, sentinel: string): fc.Arbitrary<Hostile> {
  return fc
    .record({
      at: fc.constantFrom(...objectPaths(base)),
      name: fc.constantFrom(...PROTOTYPE_NAMES),
      value: smallJson,
      move: fc.option(fc.nat(), { nil: undefined }),
      position: fc.nat(),
    })
    .map(({ at, name, value, move, position }) => {
      const parent = getAt(base, at) as Record<string, unknown>;
      const keys = Object.keys(parent);
      const moved = move !== undefined && keys.length > 0 ? keys[move % keys.length] : undefined;
      const injectedValue = moved !== undefined ? { [moved]: '\u0000placeholder', sentinel } : { sentinel, value };
      let injectedText = render(injectedValue);
      if (moved !== undefined) injectedText = injectedText.replace(JSON.stringify('\u0000placeholder'), render(parent[moved]));
      const plain = structuredCloneJson(base);
      if (moved !== undefined) delete (getAt(plain, at) as Record<string, unknown>)[moved];
      const text = render(base, {
        at,
        members: (entries) => {
          const kept = entries.filter(([key]) => moved === undefined || key !== JSON.stringify(moved));
          const index = position % (kept.length + 1);
          return [...kept.slice(0, index), [JSON.stringify(name), injectedText], ...kept.slice(index)];
        },
      });
      return {
        label: `"${name}" at ${at.join('.') || 'the body'}${moved ? `, holding the moved ${moved}` : ''}`,
        text,
        mustRefuse: name === '__proto__',
        plain,
        injected: { at, sentinel },
      };
    });
}

/**
 * One member of any object of the body sent twice: with the same value or another, before or
 * after the first, spelled plainly or with a `\u` escape (the same name to a JSON reader).
 */
export function duplicateMember(base: unknown): fc.Arbitrary<Hostile> {
  const withMembers = objectPaths(base).filter((path) => Object.keys(getAt(base, path) as object).length > 0);
  return fc
    .record({
      at: fc.constantFrom(...withMembers),
      pick: fc.nat(),
      same: fc.boolean(),
      value: smallJson,
      before: fc.boolean(),
      escaped: fc.boolean(),
    })
    .map(({ at, pick, same, value, before, escaped }) => {
      const parent = getAt(base, at) as Record<string, unknown>;
      const keys = Object.keys(parent);
      const name = keys[pick % keys.length]!;
      const spelled = escaped
        ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(name).slice(2)}`
        : JSON.stringify(name);
      const text = render(base, {
        at,
        members: (entries) => {
          const index = entries.findIndex(([key]) => key === JSON.stringify(name));
          const repeat: [string, string] = [spelled, same ? entries[index]![1] : render(value)];
          return before ? [repeat, ...entries] : [...entries, repeat];
        },
      });
      return {
        label: `${at.concat(name).join('.')} twice (${same ? 'same value' : 'another value'}${escaped ? ', escaped' : ''})`,
        text,
        mustRefuse: true,
        plain: base,
      };
    });
}

/**
 * A JSON number of any shape put in place of any scalar of the body: a sign, zero or up to 1,000
 * integer digits, an optional fraction, an optional exponent (`e`/`E`, signed, up to 25 digits).
 */
export const oddNumberText: fc.Arbitrary<string> = fc
  .record({
    negative: fc.boolean(),
    integer: fc.oneof(
      fc.constant('0'),
      fc.stringMatching(/^[1-9][0-9]{0,24}$/),
      fc.integer({ min: 26, max: 1000 }).map((length) => `1${'0'.repeat(length - 1)}`),
    ),
    fraction: fc.option(
      fc.oneof(
        fc.stringMatching(/^[0-9]{1,4}$/),
        fc.constant('00'),
        fc.integer({ min: 5, max: 400 }).map((length) => '0'.repeat(length - 1) + '1'),
      ),
      { nil: undefined },
    ),
    exponent: fc.option(
      fc.record({ letter: fc.constantFrom('e', 'E'), sign: fc.constantFrom('', '+', '-'), digits: fc.stringMatching(/^[0-9]{1,25}$/) }),
      { nil: undefined },
    ),
  })
  .map(
    ({ negative, integer, fraction, exponent }) =>
      `${negative ? '-' : ''}${integer}${fraction !== undefined ? `.${fraction}` : ''}${exponent ? `${exponent.letter}${exponent.sign}${exponent.digits}` : ''}`,
  );

export function oddNumber(base: unknown): fc.Arbitrary<Hostile> {
  // Members of objects only: the member edit rewrites objects (scalars inside arrays stay as they are).
  const members = leafPaths(base).filter((path) => typeof path[path.length - 1] === 'string');
  return fc.record({ at: fc.constantFrom(...members), number: oddNumberText }).map(({ at, number }) => {
    const parentPath = at.slice(0, -1);
    const key = at[at.length - 1]!;
    const text = render(base, {
      at: parentPath,
      members: (entries) =>
        entries.map(([name, value]): [string, string] => (name === JSON.stringify(key) ? [name, number] : [name, value])),
    });
    return {
      label: `${at.join('.')} = ${number.length > 40 ? `${number.slice(0, 40)}… (${number.length} characters)` : number}`,
      text,
      mustRefuse: false,
      plain: undefined,
    };
  });
}

/**
 * Text no reader downstream can take, put in place of any member of the body, as its value or
 * (for strings) its name: objects and arrays nested past `maxDepth` (just past it, or thousands
 * deep, as a 1 MiB body can be), or a string holding U+0000 or a lone UTF-16 surrogate (valid
 * JSON escapes, but no store keeps them and UTF-8 cannot carry a surrogate). Every such body must
 * be refused, whatever the contract says about the place.
 */
export function unreadableMember(base: unknown, maxDepth: number): fc.Arbitrary<Hostile> {
  const members = memberPaths(base).filter((path) => typeof path[path.length - 1] === 'string');
  const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => `\\u${code.toString(16)}`);
  const unstorable = fc
    .record({
      escape: fc.oneof(surrogate, fc.constant('\\u0000')),
      before: fc.string({ maxLength: 4 }),
      after: fc.string({ maxLength: 4 }),
    })
    .map(({ escape, before, after }) => `${JSON.stringify(before).slice(0, -1)}${escape}${JSON.stringify(after).slice(1)}`);
  const nested = fc
    .record({
      depth: fc.oneof(fc.integer({ min: maxDepth + 1, max: maxDepth + 3 }), fc.integer({ min: 1000, max: 20_000 })),
      objects: fc.boolean(),
    })
    .map(({ depth, objects }) => (objects ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`));
  return fc
    .record({
      at: fc.constantFrom(...members),
      what: fc.oneof(
        nested.map((text) => ({ text, inName: false })),
        unstorable.map((text) => ({ text, inName: false })),
        unstorable.map((text) => ({ text, inName: true })),
      ),
    })
    .map(({ at, what }) => {
      const key = JSON.stringify(at[at.length - 1]!);
      const text = render(base, {
        at: at.slice(0, -1),
        members: (entries) =>
          entries.map(([name, value]): [string, string] =>
            name !== key ? [name, value] : what.inName ? [what.text, value] : [name, what.text],
          ),
      });
      const shown = what.text.length > 40 ? `${what.text.slice(0, 40)}… (${what.text.length} characters)` : what.text;
      return {
        label: `${at.join('.')} ${what.inName ? 'renamed' : '='} ${shown}`,
        text,
        mustRefuse: true,
        plain: undefined,
        refusal: /nested more than|NUL character|lone UTF-16 surrogate/,
      };
    });
}

/** Whether a member injected at `at` stays in what is forwarded: true only inside an object the contract leaves open. */
export function forwardedAt(api: ApiName, schema: unknown, value: unknown, at: JsonPath): boolean {
  let nodes: readonly unknown[] = [schema];
  for (let depth = 0; ; depth++) {
    const here = getAt(value, at.slice(0, depth));
    const merged = effective(api, nodes, here);
    if (merged.open) return true;
    if (depth === at.length) return false;
    const part = at[depth]!;
    const next = typeof part === 'number' ? merged.items : merged.properties.get(part);
    if (!next || next.length === 0) return false;
    nodes = next;
  }
}

function structuredCloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map(structuredCloneJson) as T;
  if (isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, structuredCloneJson(item)])) as T;
  return value;
}
