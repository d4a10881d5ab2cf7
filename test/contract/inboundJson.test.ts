import { describe, expect, test } from 'vitest';
import { decimalViolation } from '../../src/contract/decimal.js';
import { InboundRefusal, parseInboundJson, readInboundBody } from '../../src/contract/inboundJson.js';
import { LosslessNumber, stringifyLossless } from '../../src/contract/json.js';
import { check, operation } from '../../src/contract/operations.js';
import { pruneToSchema } from '../../src/contract/prune.js';
import { requestExamples } from '../support/contract-requests.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const refusal = (read: () => unknown): string => {
  try {
    read();
  } catch (error) {
    if (error instanceof InboundRefusal) return error.message;
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('the inbound JSON reader (ADR 0015)', () => {
  test('a member named __proto__ is refused at any depth, naming where', () => {
    expect(refusal(() => parseInboundJson(bytes('{"__proto__":{"a":1}}')))).toMatch(/^__proto__: a member named __proto__ is not accepted/);
    expect(refusal(() => parseInboundJson(bytes('{"a":[{"b":{"\\u005f_proto__":1}}]}')))).toMatch(/^a\[0\]\.b\.__proto__:/);
  });

  test('a repeated member name is refused, with the same value or another, escaped or not', () => {
    expect(refusal(() => parseInboundJson(bytes('{"a":1,"a":1}')))).toBe(
      'a appears more than once in the same object; send each member once',
    );
    expect(refusal(() => parseInboundJson(bytes('{"o":{"a":1,"a":2}}')))).toBe(
      'o.a appears more than once in the same object; send each member once',
    );
    expect(refusal(() => parseInboundJson(bytes('{"o":[1,{"a":"x","\\u0061":"x"}]}')))).toMatch(/^o\[1\]\.a appears more than once/);
    // The same name in two different objects is not a repeat.
    expect(parseInboundJson(bytes('{"a":{"a":1},"b":[{"a":1},{"a":1}]}'))).toBeTruthy();
  });

  test('Object.prototype names are ordinary own members, never read through the prototype', () => {
    const value = parseInboundJson(bytes('{"constructor":1,"toString":"x","hasOwnProperty":null}')) as object;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['constructor', 'toString', 'hasOwnProperty']);
  });

  test('what the validator sees is what the handler reads: own members only', () => {
    const op = operation('createOrderPayment');
    const [example] = requestExamples('platform', 'createOrderPayment');
    const body = example!.value as { order: Record<string, unknown> };
    const { amount, ...withoutAmount } = body.order;
    expect(amount).toBeDefined();
    // `amount` only on the prototype chain of a value built in code: still missing.
    const inherited = { ...body, order: Object.assign(Object.create({ amount }), withoutAmount) };
    expect(check(op.validateBody!, inherited)).toMatchObject({ valid: false, message: 'order.amount is required' });
  });

  test('pruning keeps only the fields the schema lists, whatever their names', () => {
    const [example] = requestExamples('platform', 'createOrderPayment');
    const order = { ...(example!.value as { order: object }).order, constructor: 1, toString: 2, valueOf: { x: 1 }, unknown_field: 3 };
    const pruned = pruneToSchema('hostapp', 'HostappCreateOrderPaymentRequest', { app_id: 'ma_1', order }) as { order: object };
    for (const name of ['constructor', 'toString', 'valueOf', 'unknown_field']) expect(Object.hasOwn(pruned.order, name)).toBe(false);
    expect(Object.keys(pruned.order).length).toBeGreaterThan(0);
  });

  test('a signed amount is refused as a number as it is as a string; odd numbers are contract errors', () => {
    const rule = { precision: 20, scale: 2, minimum: '0' };
    for (const text of ['-0', '-0.00', '-0.0']) expect(decimalViolation(text, rule)).toBe('must be written without a sign');
    expect(decimalViolation('-1', rule)).toBe('must be at least 0');
    for (const text of ['-0e0', '1e400', '1E2', '0.1e1']) expect(decimalViolation(text, rule)).toMatch(/no exponent/);
    expect(decimalViolation(`1${'0'.repeat(1000)}`, rule)).toMatch(/at most 20 digits/);
    // Signed ranges (latitude) keep their sign.
    expect(decimalViolation('-0', { precision: 17, scale: 15, minimum: '-90', maximum: '90' })).toBeUndefined();
  });

  test('a long array of bad items is refused at its first failure, not item by item', () => {
    const op = operation('createOrderPayment');
    const example = stringifyLossless(requestExamples('platform', 'createOrderPayment')[0]!.value);
    const body = JSON.parse(example) as { order: { items?: unknown[] } };
    // Each item fails, past maxItems: collecting every failure took time growing faster than the
    // array (a 600 KB body held a core for minutes, before authentication could refuse it).
    body.order.items = Array.from({ length: 20_000 }, () => 0);
    expect(refusal(() => readInboundBody(op, bytes(JSON.stringify(body))))).toMatch(/^order\.items must have at most \d+ entries$/);
    expect(op.validateBody!(body)).toBe(false);
    expect(op.validateBody!.errors).toHaveLength(1);
  });

  test('integers are digits only: 1.0, 1E2 and 1e400 are refused where the contract says integer', () => {
    const op = operation('createOrderPayment');
    const example = requestExamples('platform', 'createOrderPayment').find((named) =>
      stringifyLossless(named.value).includes('"quantity"'),
    );
    const text = stringifyLossless(example!.value);
    for (const odd of ['1.0', '1E2', '1e400', '-0e0']) {
      const body = JSON.parse(text) as { order: { items?: Array<Record<string, unknown>> } };
      body.order.items![0]!.quantity = new LosslessNumber(odd);
      expect(refusal(() => readInboundBody(op, bytes(stringifyLossless(body))))).toMatch(
        /quantity must be a whole number written in digits only/,
      );
    }
  });
});
