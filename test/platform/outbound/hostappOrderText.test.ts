import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { stringify as losslessJsonStringify } from 'lossless-json';
import { canonicalJsonText, isJsonObject, parseLossless, stringifyLossless } from '../../../src/contract/json.js';
import { hostappOrderRequest, hostappOrderText } from '../../../src/platform/payments/hostappOrder.js';
import { propertyRunOptions } from '../../support/properties.js';

const E1 = `{"app_id":"ma_1","client_id":"ha_1","order":{"miniapp_order_id":"ORD-1","currency":"VND","amount":12345678901234567.89,
  "custom_attributes":{"z":1.50,"a":{"y":true,"b":[3,{"d":1,"c":2}]}},
  "items":[{"product_name":"Tea","product_variant_name":"Green","product_sku":"T-1","product_image_url":"https://x.test/t.png","quantity":2,"price":"10.00","discount":0}]}}`;
const REORDERED = `{"order":{"items":[{"discount":0,"price":"10.00","quantity":2,"product_image_url":"https://x.test/t.png","product_sku":"T-1","product_variant_name":"Green","product_name":"Tea"}],
  "custom_attributes":{"a":{"b":[3,{"c":2,"d":1}],"y":true},"z":1.50},"amount":12345678901234567.89,"currency":"VND",
  "miniapp_order_id":"ORD-1"},"client_id":"ha_1","app_id":"ma_1"}`;

const EXPIRES_AT = new Date('2026-11-26T09:30:00.000Z');

function e3Text(e1: string) {
  const request = parseLossless(e1) as Parameters<typeof hostappOrderRequest>[0];
  const e3 = hostappOrderRequest(request);
  if (!e3.ok) throw new Error(e3.message);
  return { e3: e3.body, text: hostappOrderText(request.client_id, e3.body, { expiresAt: EXPIRES_AT }) };
}

describe('the E3 body is serialised once: hash, stored order and the bytes sent', () => {
  test('the text is the E3 body, digits kept, keys sorted; the order is its order member', () => {
    const { e3, text } = e3Text(E1);
    expect(stringifyLossless(parseLossless(text.body))).toBe(text.body);
    expect(parseLossless(text.body)).toEqual(parseLossless(stringifyLossless({ ...e3, expires_at: EXPIRES_AT.toISOString() })));
    expect(text.body).toContain('"amount":12345678901234567.89');
    expect(text.body).toContain('"z":1.50');
    expect(text.body.startsWith('{"app_id":"ma_1","expires_at":"2026-11-26T09:30:00.000Z","order":{"amount":')).toBe(true);
    expect(text.body).toBe(`{"app_id":"ma_1","expires_at":"2026-11-26T09:30:00.000Z","order":${text.order}}`);
    expect(text.order).toContain('{"b":[3,{"c":2,"d":1}],"y":true}');
  });

  test('two E1s that differ only in member order give the same text and hash; another value another hash', () => {
    const first = e3Text(E1).text;
    const reordered = e3Text(REORDERED).text;
    expect(reordered).toEqual(first);
    expect(e3Text(E1.replace('"ORD-1"', '"ORD-2"')).text.hash).not.toBe(first.hash);
    expect(e3Text(E1.replace('1.50', '1.5')).text.hash).not.toBe(first.hash);
  });

  test('the hash is the one reservations made before expiry existed hold: sha256 of client_id, a newline and the sorted E3 body without its expiry', () => {
    const { text } = e3Text(E1);
    const withoutExpiry = text.body.replace('"expires_at":"2026-11-26T09:30:00.000Z",', '');
    expect(text.hash).toBe(createHash('sha256').update('ha_1\n').update(withoutExpiry).digest('hex'));
    expect(text.hash).toMatchInlineSnapshot(`"51fcbb34c19ff7cda821e80c2bfa858ab43c134c5b4cc1ced46a1f9a78a0f635"`);
  });

  test('the expiry instant is not part of the identity; the lifetime the miniapp asked for is (ADR 0039)', () => {
    const request = parseLossless(E1) as Parameters<typeof hostappOrderRequest>[0];
    const e3 = hostappOrderRequest(request);
    if (!e3.ok) throw new Error(e3.message);
    const later = hostappOrderText('ha_1', e3.body, { expiresAt: new Date(EXPIRES_AT.getTime() + 60_000) });
    expect(later.hash).toBe(e3Text(E1).text.hash);
    expect(later.body).not.toBe(e3Text(E1).text.body);
    const shorter = hostappOrderText('ha_1', e3.body, { expiresAt: EXPIRES_AT, requestedLifetimeSeconds: 900 });
    expect(shorter.hash).not.toBe(later.hash);
    expect(shorter.hash).toBe(createHash('sha256').update(`ha_1\n{"app_id":"ma_1","order":${shorter.order}}\nlifetime:900`).digest('hex'));
  });
});

describe('canonicalJsonText', () => {
  /** How the text was made before: a copy with sorted keys, serialised by lossless-json. */
  const sortedCopy = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sortedCopy)
      : isJsonObject(value)
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, sortedCopy(value[key])]),
          )
        : value;

  test('gives byte for byte the text of the sorted copy, for any JSON, numbers kept by their text', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.array(fc.constantFrom('0', '7', '10', '4294967294', '4294967295', '01', '-1', 'a', 'B', '__proto__')),
        (value, keys) => {
          const withKeys = { ...Object.fromEntries(keys.map((key, index) => [key, index])), nested: value };
          const parsed = parseLossless(JSON.stringify(withKeys) ?? 'null');
          expect(canonicalJsonText(parsed)).toBe(losslessJsonStringify(sortedCopy(parsed)));
        },
      ),
      propertyRunOptions('canonicalJsonText', 300),
    );
    const exact = parseLossless('{"b":12345678901234567.89,"a":[1.50,{"10":1,"9":2,"x":3}]}');
    expect(canonicalJsonText(exact)).toBe('{"a":[1.50,{"9":2,"10":1,"x":3}],"b":12345678901234567.89}');
  });
});

describe('stringifyLossless', () => {
  test("writes lossless-json's text for any JSON with exact numbers, and what JSON.stringify takes besides", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const parsed = parseLossless(JSON.stringify(value) ?? 'null');
        expect(stringifyLossless(parsed)).toBe(losslessJsonStringify(parsed));
      }),
      propertyRunOptions('stringifyLossless', 300),
    );
    const others = {
      at: new Date('2026-11-26T09:30:00.000Z'),
      invalid: new Date(Number.NaN),
      skipped: undefined,
      call: () => 1,
      list: [undefined, () => 1, Symbol('s'), Number.NaN, -0, 1e21],
      big: 12345678901234567890n,
      boxed: [new Number(2), new String('s'), new Boolean(false)],
      own: { toJSON: () => ({ b: 1, a: [2] }) },
      exact: parseLossless('[12345678901234567.89, 1.50]'),
      nested: { '10': 1, '9': 2, x: { y: null } },
    };
    expect(stringifyLossless(others)).toBe(losslessJsonStringify(others));
    expect(() => stringifyLossless(undefined)).toThrow(TypeError);
  });
});
