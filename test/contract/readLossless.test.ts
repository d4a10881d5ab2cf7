import fc from 'fast-check';
import { parse as losslessJsonParse } from 'lossless-json';
import { describe, expect, test } from 'vitest';
import { firstAmbiguousMember, parseInboundJson } from '../../src/contract/inboundJson.js';
import { isLosslessNumber, nestsDeeperThan, readLossless, scanJson } from '../../src/contract/json.js';
import { propertyRunOptions } from '../support/properties.js';

/**
 * readLossless is the fast read of every inbound body and partner answer (ADR 0035); lossless-json
 * is the reference it must equal exactly: the same value, members in the same order, numbers by
 * the same text, and for a text either refuses, the same message.
 */

/** Everything about a read value that a reader downstream can see, as comparable data. */
function shape(value: unknown): unknown {
  if (isLosslessNumber(value)) return { number: value.value };
  if (Array.isArray(value)) return { array: value.map(shape) };
  if (value !== null && typeof value === 'object')
    return {
      prototype: Object.getPrototypeOf(value) === Object.prototype,
      members: Reflect.ownKeys(value).map((key) => [key, shape((value as Record<string, unknown>)[key as string])]),
    };
  return { [typeof value]: value };
}

function outcome(read: () => unknown): unknown {
  try {
    return { value: shape(read()) };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

// JSON text written the way partners write it: number forms JSON.parse rounds, names that are
// array indexes, repeated or __proto__, escapes, whitespace; and now and then a broken token.
const space = fc.constantFrom('', '', ' ', '\n  ', '\t', '\r\n');
const numberText = fc.oneof(
  fc.constantFrom('0', '-0', '12.30', '1.10', '12345678901234567.89', '1e400', '-1E-7', '2.5e+3', '0.1', '9007199254740993'),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
);
const stringText = fc.oneof(
  fc.string().map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\u0061"', '"\\ud83d\\ude00"', '"a\\"b\\\\c\\/\\n"', '"\\ud800"', '"é"'),
);
const nameText = fc.oneof(
  stringText,
  fc.constantFrom(
    '"a"',
    '"b"',
    '"a"',
    '"0"',
    '"7"',
    '"10"',
    '"01"',
    '"-1"',
    '"__proto__"',
    '"\\u005f_proto__"',
    '"\\u0061"',
    '"constructor"',
    '"_\\u005fproto__"',
    '"__proto\\u005f_"',
    '"__pr\\u006fto__"',
    '"a\\u0062"',
    '"ab"',
  ),
  // Escapes anywhere inside a name: one name written two ways, or __proto__ disguised.
  fc
    .array(fc.constantFrom('_', '\\u005f', 'proto', 'pr\\u006fto', 'a', '\\u0061', '\\"', '\\\\', '\\u0030', '1'), {
      minLength: 1,
      maxLength: 6,
    })
    .map((parts) => `"${parts.join('')}"`),
);
const broken = fc.constantFrom('', ',', '}', '01', '.5', 'tru', '"\\x"', '"\u0001"', 'NaN', '[', ':');
const { json } = fc.letrec<{ json: string; value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    stringText,
    fc.constantFrom('true', 'false', 'null'),
    tie('json'),
  ),
  json: fc.oneof(
    fc
      .array(fc.tuple(space, nameText, space, tie('value'), space), { maxLength: 5 })
      .map((members) => `{${members.map(([a, name, b, value, c]) => `${a}${name}${b}:${value}${c}`).join(',')}}`),
    fc.array(fc.tuple(space, tie('value'), space), { maxLength: 5 }).map((items) => `[${items.map(([a, v, b]) => a + v + b).join(',')}]`),
  ),
}));
const text = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(space, fc.oneof(json, numberText, stringText), space).map(([a, t, b]) => a + t + b) },
  {
    weight: 1,
    arbitrary: fc.tuple(json, fc.nat(), broken).map(([t, at, bad]) => t.slice(0, at % (t.length + 1)) + bad + t.slice(at % (t.length + 1))),
  },
);

describe('readLossless', () => {
  test('reads every text exactly as lossless-json does, or refuses it with the same message', () => {
    fc.assert(
      fc.property(text, (source) => {
        expect(outcome(() => readLossless(source).value)).toEqual(outcome(() => losslessJsonParse(source)));
      }),
      propertyRunOptions('readLossless', 3000),
    );
  });

  test('proves names distinct only when no object repeats a name or has one named __proto__', () => {
    fc.assert(
      fc.property(json, (source) => {
        let read;
        try {
          read = readLossless(source);
        } catch {
          return;
        }
        if (!read.distinctNames) return;
        // The inbound reader skips its own scan for such a read: that scan must have nothing to find.
        expect(firstAmbiguousMember(source)).toBeUndefined();
      }),
      propertyRunOptions('readLossless distinct names', 1000),
    );
  });

  test('keeps the digits JSON.parse would round, and falls back where member order could differ', () => {
    const read = readLossless('{"amount":12345678901234567.89,"items":[{"price":1.10}],"n":9007199254740993}');
    expect(read.distinctNames).toBe(true);
    expect(shape(read.value)).toEqual(
      shape(losslessJsonParse('{"amount":12345678901234567.89,"items":[{"price":1.10}],"n":9007199254740993}')),
    );
    expect(readLossless('{"b":1,"10":2}').distinctNames).toBe(false);
    expect(Object.keys(readLossless('{"b":1,"10":2}').value as object)).toEqual(['10', 'b']);
    expect(readLossless('{"a":1,"a":1}').distinctNames).toBe(false);
    expect(readLossless('{"a\\u0062":1,"ab":1}').distinctNames).toBe(false);
    expect(readLossless('{"x":{"__proto__":1}}').distinctNames).toBe(false);
    expect(Object.getPrototypeOf((readLossless('{"x":{"__proto__":{"p":1}}}').value as { x: object }).x)).toBe(Object.prototype);
    // __proto__ with an escape anywhere in it is still __proto__: refused by the inbound reader.
    for (const name of ['_\\u005fproto__', '__proto\\u005f_', '\\u005f_proto__']) {
      expect(readLossless(`{"${name}":{"isAdmin":true}}`).distinctNames).toBe(false);
      expect(() => parseInboundJson(Buffer.from(`{"a":{"${name}":{"isAdmin":true}}}`))).toThrow(/__proto__ is not accepted/);
    }
  });
});

/** The nesting depth of a parsed value: what the scanner measures on its text. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe('scanJson, the one tokenizer of JSON text', () => {
  test('measures nesting as the parsed value has it, and stops past the limit', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 0, max: 6 }), (source, limit) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(source);
        } catch {
          return;
        }
        // JSON.parse keeps one of a repeated member: its value then says nothing of the text's depth.
        if (scanJson(source, { names: true }).ambiguous) return;
        expect(nestsDeeperThan(source, limit)).toBe(depthOf(parsed) > limit);
      }),
      propertyRunOptions('scanJson depth', 1000),
    );
  });

  test('finds a repeated or __proto__ member exactly when a reader keeping every member finds one', () => {
    const repeatedOrProto = (source: string): boolean => {
      let found = false;
      // JSON.parse's reviver sees each object whole; lossless-json refuses a repeat with another
      // value, so count names on the text's own objects: parse with a reviver that cannot see
      // repeats, and compare member counts with the scan's.
      try {
        losslessJsonParse(source, (key, value) => {
          if (key === '__proto__') found = true;
          return value;
        });
      } catch (error) {
        if ((error as Error).message.startsWith('Duplicate key')) return true;
        throw error;
      }
      const scan = scanJson(source);
      const objects: number[] = [];
      const walk = (value: unknown) => {
        if (Array.isArray(value)) value.forEach(walk);
        else if (value !== null && typeof value === 'object' && !isLosslessNumber(value)) {
          objects.push(Reflect.ownKeys(value).length);
          Object.values(value).forEach(walk);
        }
      };
      walk(losslessJsonParse(source));
      return found || objects.some((count, index) => count !== scan.memberCounts[index]);
    };
    fc.assert(
      fc.property(json, (source) => {
        try {
          JSON.parse(source);
        } catch {
          return;
        }
        expect(scanJson(source, { names: true }).ambiguous !== undefined).toBe(repeatedOrProto(source));
      }),
      propertyRunOptions('scanJson names', 1000),
    );
  });
});
