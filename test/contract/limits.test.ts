import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import type { DecimalRule } from '../../src/contract/decimal.js';
import { loadDocument, resolve, type ApiName } from '../../src/contract/documents.js';
import { dotted, hasAt, withoutAt, withRawAt, type JsonPath } from '../../src/contract/jsonPath.js';
import { stringifyLossless } from '../../src/contract/json.js';
import { contractOperations, check, operation } from '../../src/contract/operations.js';
import { locations } from '../../src/contract/schemaLocations.js';
import { replayWindowSeconds } from '../../src/wire/signing.js';
import { maxBodyBytes, maxHeaderBytes, pageSize, requestTimeoutMs } from '../../src/contract/limits.js';
import { requestExamples, requestSchema } from '../support/contract-requests.js';

/** Every operation with a request body, with the examples its vectors start from. */
const bodyOperations = [...contractOperations().values()]
  .filter((candidate) => candidate.validateBody)
  .map((candidate) => ({
    api: candidate.api,
    operationId: candidate.operationId,
    examples: requestExamples(candidate.api, candidate.operationId),
  }));

/** The first request example of the operation that holds the parent of `path` (so only `path` changes). */
function baseFor(operationId: string, path: JsonPath): unknown {
  const found = bodyOperations.find((candidate) => candidate.operationId === operationId)!;
  const parent = path.slice(0, -1);
  const example = found.examples.find((candidate) => parent.length === 0 || hasAt(candidate.value, parent));
  if (!example) throw new Error(`${operationId}: no request example holds ${dotted(parent)}; add one to the contract`);
  return example.value;
}

/** Sends raw JSON text at `path` through the operation's compiled body validator. */
function verdict(operationId: string, path: JsonPath, raw: string) {
  return check(operation(operationId).validateBody!, withRawAt(baseFor(operationId, path), path, raw));
}

function expectValid(operationId: string, path: JsonPath, raw: string): void {
  const result = verdict(operationId, path, raw);
  expect(result.valid ? 'valid' : result.message, `${dotted(path)} = ${raw}`).toBe('valid');
}

function expectRefused(operationId: string, path: JsonPath, raw: string, naming = dotted(path)): void {
  const result = verdict(operationId, path, raw);
  expect(result.valid, `${dotted(path)} = ${raw} must be refused`).toBe(false);
  expect(result.valid ? '' : result.message).toContain(naming);
}

/** A value as a JSON string and as a JSON number, both as raw text. */
const asStringAndNumber = (text: string) => [`"${text}"`, text];

test('there are request bodies to check', () => {
  expect(bodyOperations.length).toBeGreaterThan(5);
  for (const found of bodyOperations) expect(found.examples.length, found.operationId).toBeGreaterThan(0);
});

describe('string lengths: maxLength n passes, n+1 is refused naming the field (derived from the contract)', () => {
  const vectors = bodyOperations.flatMap(({ api, operationId }) =>
    locations(api, requestSchema(api, operationId)).flatMap(({ path, maxLength, closedTo }) =>
      // An enum or const location admits no free text, so no length vector applies there.
      maxLength === undefined || closedTo ? [] : [[`${operationId} ${dotted(path)} (${maxLength})`, operationId, path, maxLength] as const],
    ),
  );

  test('limits were found on every operation with a string field', () => {
    expect(vectors.length).toBeGreaterThan(50);
  });

  /**
   * A string of `length` characters for `path`: 'x' repeated, or, where the field has a pattern
   * (a URL, an address), a URL scheme or the example's own value padded with a character the pattern admits.
   * Returns the first the schema accepts at `length`, so only the length can break it at length + 1.
   */
  function filled(operationId: string, path: JsonPath, length: number): string {
    const value = path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], baseFor(operationId, path));
    const prefixes = ['', 'https://', ...(typeof value === 'string' ? [value] : [])];
    const candidates = prefixes.flatMap((prefix) => ['x', 'a', '0'].map((pad) => (prefix + pad.repeat(length)).slice(0, length)));
    // An RFC 3339 instant grows in its fraction of a second: the example's, with zeros before its Z.
    if (typeof value === 'string' && /\.\d+Z$/.test(value)) candidates.push(`${value.slice(0, -1).padEnd(length - 1, '0')}Z`);
    return candidates.find((candidate) => verdict(operationId, path, JSON.stringify(candidate)).valid) ?? candidates[0]!;
  }

  test.each(vectors)('%s', (_name, operationId, path, maxLength) => {
    const atLimit = filled(operationId, path, maxLength);
    expectValid(operationId, path, JSON.stringify(atLimit));
    expectRefused(operationId, path, JSON.stringify(`${atLimit}${atLimit.at(-1)}`));
  });

  test('the effective limit is the narrowest allOf branch (E1 String(250), E3 String(255)/String(500))', () => {
    const limitOf = (api: ApiName, operationId: string, path: JsonPath) =>
      locations(api, requestSchema(api, operationId)).find((location) => dotted(location.path) === dotted(path))?.maxLength;
    expect(limitOf('platform', 'createOrderPayment', ['order', 'miniapp_order_id'])).toBe(250);
    expect(limitOf('hostapp', 'createHostappOrderPayment', ['order', 'miniapp_order_id'])).toBe(255);
    expect(limitOf('platform', 'createOrderPayment', ['order', 'items', 0, 'product_image_url'])).toBe(250);
    expect(limitOf('hostapp', 'createHostappOrderPayment', ['order', 'items', 0, 'product_image_url'])).toBe(500);
    expect(limitOf('platform', 'sendMiniappEvent', ['payload', 'fulfillment_status'])).toBe(100);
  });
});

describe('integer maximums: maximum passes, maximum+1 is refused naming the field (derived from the contract)', () => {
  const vectors = bodyOperations.flatMap(({ api, operationId }) =>
    locations(api, requestSchema(api, operationId)).flatMap(({ path, integerMaximum }) =>
      integerMaximum === undefined
        ? []
        : [[`${operationId} ${dotted(path)} (${integerMaximum})`, operationId, path, integerMaximum] as const],
    ),
  );

  test('item quantity is bounded on E1 and E3', () => {
    expect(vectors.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('createOrderPayment order.items[0].quantity'),
        expect.stringContaining('createHostappOrderPayment order.items[0].quantity'),
      ]),
    );
  });

  test.each(vectors)('%s', (_name, operationId, path, maximum) => {
    expectValid(operationId, path, String(maximum));
    expectRefused(operationId, path, String(maximum + 1));
  });
});

describe('array sizes: maxItems passes, maxItems+1 is refused naming the array (derived from the contract)', () => {
  const vectors = bodyOperations.flatMap(({ api, operationId }) =>
    locations(api, requestSchema(api, operationId)).flatMap(({ path, maxItems }) =>
      maxItems === undefined ? [] : [[`${operationId} ${dotted(path)} (${maxItems})`, operationId, path, maxItems] as const],
    ),
  );

  test('order items are bounded on E1 and E3', () => {
    expect(vectors.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('createOrderPayment order.items'),
        expect.stringContaining('createHostappOrderPayment order.items'),
      ]),
    );
  });

  test.each(vectors)('%s', (_name, operationId, path, maxItems) => {
    // Copies of the example's first element (or distinct variants of it), so only the count can break the schema.
    const example = baseFor(operationId, [...path, 0]);
    const array = path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], example) as unknown[];
    const element = stringifyLossless(array[0]);
    const copies = (count: number) => `[${Array.from({ length: count }, () => element).join(',')}]`;
    // Where the array says uniqueItems (an allow-list, linked host apps), copies break it, so its
    // string elements differ in their last two characters instead: decimal digits, which every
    // such pattern here admits.
    const first = array[0];
    const distinct = (count: number) =>
      `[${Array.from({ length: count }, (_, index) => JSON.stringify(`${String(first).slice(0, -2)}${String(index).padStart(2, '0')}`)).join(',')}]`;
    const list = typeof first === 'string' && !verdict(operationId, path, copies(maxItems)).valid ? distinct : copies;
    const atLimit = verdict(operationId, path, list(maxItems));
    expect(atLimit.valid ? 'valid' : atLimit.message, `${maxItems} elements`).toBe('valid');
    const overLimit = verdict(operationId, path, list(maxItems + 1));
    expect(overLimit.valid ? 'valid' : overLimit.message, `${maxItems + 1} elements`).toBe(
      `${dotted(path)} must have at most ${maxItems} entries`,
    );
  });
});

const ORDER_OPERATIONS = ['createOrderPayment', 'createHostappOrderPayment'] as const;
const AMOUNT: JsonPath = ['order', 'amount'];
const PRICE: JsonPath = ['order', 'items', 0, 'price'];
const LATITUDE: JsonPath = ['order', 'shipping_address', 'latitude'];
const LONGITUDE: JsonPath = ['order', 'shipping_address', 'longitude'];

describe('money: at most 20 digits, 2 after the point, no exponent, never negative (E1 and E3)', () => {
  const valid = ['12345678901234567890', '123456789012345678.90', '99999999999999999999', '0', '12.5', '12.30'];
  const invalid = ['123456789012345678901', '1234567890123456789.01', '1.234', '1e3', '1E3', '-1', '-0.01'];
  const cases = (values: string[]) =>
    ORDER_OPERATIONS.flatMap((operationId) =>
      [AMOUNT, PRICE].flatMap((path) =>
        values.flatMap((text) =>
          asStringAndNumber(text).map((raw) => [`${operationId} ${dotted(path)} = ${raw}`, operationId, path, raw] as const),
        ),
      ),
    );

  test.each(cases(valid))('valid: %s', (_name, operationId, path, raw) => expectValid(operationId, path, raw));
  test.each(cases(invalid))('refused: %s', (_name, operationId, path, raw) => expectRefused(operationId, path, raw));

  test.each(ORDER_OPERATIONS.map((operationId) => [operationId]))(
    '%s: a string keeps JSON number grammar (no leading zero, sign or blanks)',
    (operationId) => {
      for (const raw of ['"01"', '"+1"', '" 1"', '"1."', '".5"', '""']) expectRefused(operationId, AMOUNT, raw);
    },
  );
});

describe('coordinates: latitude -90..90, longitude -180..180, at most 15 decimals (E1 and E3)', () => {
  const vectors: Array<[JsonPath, string[], string[]]> = [
    [
      LATITUDE,
      ['-90', '90', '0', '10.123456789012345', '-89.999999999999999', '90.000000000000000'],
      ['-90.000000000000001', '90.1', '90.000000000000001', '10.1234567890123456', '1e1', '-91'],
    ],
    [
      LONGITUDE,
      ['-180', '180', '106.123456789012345', '-179.999999999999999'],
      ['-180.000000000000001', '180.1', '106.1234567890123456', '181', '1e2'],
    ],
  ];
  const cases = (pick: 1 | 2) =>
    ORDER_OPERATIONS.flatMap((operationId) =>
      vectors.flatMap((vector) =>
        vector[pick].flatMap((text) =>
          asStringAndNumber(text).map((raw) => [`${operationId} ${dotted(vector[0])} = ${raw}`, operationId, vector[0], raw] as const),
        ),
      ),
    );

  test.each(cases(1))('valid: %s', (_name, operationId, path, raw) => expectValid(operationId, path, raw));
  test.each(cases(2))('refused: %s', (_name, operationId, path, raw) => expectRefused(operationId, path, raw));
});

describe('every x-decimal field: boundary vectors derived from its rule, as string and as number', () => {
  const cases = bodyOperations.flatMap(({ api, operationId }) =>
    locations(api, requestSchema(api, operationId)).flatMap(({ path, decimal: rule }) => {
      if (!rule) return [];
      const { valid, invalid } = decimalVectors(rule);
      const name = (raw: string, verdict: string) => `${operationId} ${dotted(path)} = ${raw} ${verdict}`;
      return [
        ...valid.flatMap(asStringAndNumber).map((raw) => [name(raw, 'is valid'), operationId, path, raw, true] as const),
        ...invalid.flatMap(asStringAndNumber).map((raw) => [name(raw, 'is refused'), operationId, path, raw, false] as const),
      ];
    }),
  );

  test('decimal fields were found', () => {
    expect(cases.length).toBeGreaterThan(100);
  });

  test.each(cases)('%s', (_name, operationId, path, raw, valid) => {
    if (valid) expectValid(operationId, path, raw);
    else expectRefused(operationId, path, raw);
  });
});

describe('item quantity is a positive integer (E1 and E3)', () => {
  const cases = ORDER_OPERATIONS.flatMap(
    (operationId) =>
      [
        [operationId, '1', true],
        [operationId, '250', true],
        [operationId, '0', false],
        [operationId, '-1', false],
        [operationId, '1.5', false],
        [operationId, '"1"', false],
      ] as const,
  );
  test.each(cases)('%s quantity %s valid: %s', (operationId, raw, valid) => {
    const path: JsonPath = ['order', 'items', 0, 'quantity'];
    if (valid) expectValid(operationId, path, raw);
    else expectRefused(operationId, path, raw);
  });
});

describe('payment_status takes only the contract enum', () => {
  const enumValues = resolve<{ enum: string[] }>(loadDocument('platform'), { $ref: '#/components/schemas/PaymentStatus' }).enum;
  const cases = ['completeOrder', 'receiveOrderCompletion'].flatMap((operationId) => [
    ...enumValues.map((value) => [operationId, value, true] as const),
    ...['PAID', 'refunded', 'paid ', ''].map((value) => [operationId, value, false] as const),
  ]);
  test.each(cases)('%s payment_status %j valid: %s', (operationId, value, valid) => {
    if (valid) expectValid(operationId, ['payment_status'], JSON.stringify(value));
    else expectRefused(operationId, ['payment_status'], JSON.stringify(value));
  });
});

describe('items: every field optional on E1, required on E3', () => {
  const required = resolve<{ allOf: Array<{ required?: string[] }> }>(loadDocument('hostapp'), {
    $ref: '#/components/schemas/HostappOrderItem',
  }).allOf.flatMap((branch) => branch.required ?? []);

  test('E3 requires every item field', () => {
    expect(required).toEqual(expect.arrayContaining(['product_name', 'product_sku', 'quantity', 'price', 'discount']));
  });

  test.each(required.map((field) => [field]))('without %s: E3 refuses naming it, E1 accepts', (field) => {
    const path: JsonPath = ['order', 'items', 0, field];
    const e3 = withoutAt(baseFor('createHostappOrderPayment', path), path);
    expect(check(operation('createHostappOrderPayment').validateBody!, e3)).toMatchObject({
      valid: false,
      message: `${dotted(path)} is required`,
    });
    const e1 = withoutAt(baseFor('createOrderPayment', path), path);
    expect(check(operation('createOrderPayment').validateBody!, e1)).toEqual({ valid: true });
  });
});

describe('event rules', () => {
  const body = (operationId: string, changes: Record<string, string>) => {
    let value = baseFor(operationId, ['event_type']);
    for (const [field, raw] of Object.entries(changes)) value = withRawAt(value, [field], raw);
    return check(operation(operationId).validateBody!, value);
  };

  test('order_status_update (miniapp to host app) needs order_payment_id and fulfillment_status', () => {
    expect(body('sendMiniappEvent', {})).toEqual({ valid: true });
    expect(body('sendMiniappEvent', { payload: '{"order_payment_id":"hop_1"}' })).toMatchObject({
      valid: false,
      message: 'payload.fulfillment_status is required',
    });
    expect(body('sendMiniappEvent', { payload: '{"fulfillment_status":"shipped"}' })).toMatchObject({
      valid: false,
      message: 'payload.order_payment_id is required',
    });
    expect(body('sendMiniappEvent', { payload: '{"order_payment_id":"hop_1","fulfillment_status":""}' })).toMatchObject({ valid: false });
  });

  test('other event types carry any payload object', () => {
    expect(body('sendMiniappEvent', { event_type: '"table_ready"', payload: '{}' })).toEqual({ valid: true });
    expect(body('sendHostappEvent', { event_type: '"loyalty_points_changed"', payload: '{"points":12}' })).toEqual({ valid: true });
    expect(body('sendHostappEvent', { payload: '[]' })).toMatchObject({ valid: false, message: 'payload must be a JSON object' });
  });

  test('a known event type in the wrong direction is refused', () => {
    expect(body('sendHostappEvent', {})).toEqual({ valid: true });
    const wrongToMiniapp = body('sendHostappEvent', {
      event_type: '"order_status_update"',
      payload: '{"order_payment_id":"hop_1","fulfillment_status":"shipped"}',
    });
    expect(wrongToMiniapp.valid).toBe(false);
    expect(wrongToMiniapp.valid ? '' : wrongToMiniapp.message).toBe('event_type must not be order_status_update here');
    const wrongToHostapp = body('sendMiniappEvent', { event_type: '"user_profile_updated"', payload: '{}' });
    expect(wrongToHostapp.valid).toBe(false);
    expect(wrongToHostapp.valid ? '' : wrongToHostapp.message).toContain('event_type');
  });
});

/**
 * Vectors on both sides of an x-decimal rule: the widest values it allows (all digits, all
 * decimals, the range ends) and the first ones past it (one digit or decimal too many, just
 * outside the range, an exponent).
 */
function decimalVectors(rule: DecimalRule): { valid: string[]; invalid: string[] } {
  const tick = `${'0'.repeat(rule.scale - 1)}1`; // the smallest step: 0.01 for scale 2
  const valid = [`0.${'1'.repeat(rule.scale)}`];
  const invalid = [`0.${'1'.repeat(rule.scale + 1)}`, '1e1'];
  if (rule.maximum === undefined) {
    valid.push('9'.repeat(rule.precision), `${'9'.repeat(rule.precision - rule.scale)}.${'9'.repeat(rule.scale)}`);
    invalid.push('1'.repeat(rule.precision + 1), `${'1'.repeat(rule.precision - rule.scale + 1)}.${'1'.repeat(rule.scale)}`);
  } else {
    valid.push(rule.maximum);
    invalid.push(`${rule.maximum}.${tick}`);
  }
  if (rule.minimum !== undefined) {
    valid.push(rule.minimum);
    invalid.push(rule.minimum === '0' ? `-0.${tick}` : `${rule.minimum}.${tick}`);
  }
  for (const bound of [rule.minimum, rule.maximum]) {
    if (bound !== undefined && !/^-?\d+$/.test(bound)) throw new Error(`decimalVectors handles integer bounds only, not ${bound}`);
  }
  return { valid, invalid };
}

describe('limits stated once as x- extensions: the code reads them and the rendered descriptions name the same values (ADR 0022)', () => {
  const platform = loadDocument('platform');
  const conventions = String((platform.info as Record<string, unknown>).description).replace(/\s+/g, ' ');
  const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;
  const kib = (bytes: number) => `${bytes / 1024} KiB`;

  test('x-max-body-bytes: the conventions, the 413 response and its error code say the same size', () => {
    expect(conventions).toContain(`at most ${mib(maxBodyBytes())}: \`x-max-body-bytes\``);
    const tooLarge = resolve(platform, platform.components.responses!.PayloadTooLarge);
    expect(String(tooLarge.description)).toContain(mib(maxBodyBytes()));
    const codes = resolve(platform, platform.components.schemas!.ErrorCode) as { 'x-enumDescriptions'?: Record<string, string> };
    expect(codes['x-enumDescriptions']?.PAYLOAD_TOO_LARGE).toContain(mib(maxBodyBytes()));
  });

  test('x-max-header-bytes and x-request-timeout-ms: the conventions say the same', () => {
    expect(conventions).toContain(`headers over ${kib(maxHeaderBytes())}: \`x-max-header-bytes\``);
    expect(conventions).toContain(`within ${requestTimeoutMs() / 1000} s: \`x-request-timeout-ms\``);
  });

  test('the guides rendered on the docs landing page state the same body limit and replay window', () => {
    const guide = (name: string) => readFileSync(new URL(`../../docs/guides/${name}`, import.meta.url), 'utf8');
    for (const name of ['03-event-bridge.md', '04-errors-and-retries.md'])
      expect(guide(name), name).toContain(`Body over ${mib(maxBodyBytes())}.`);
    const windows = [...guide('02-authentication.md').matchAll(/(\d+) (?:seconds|s)\b/g)].map((found) => Number(found[1]));
    expect(windows.length).toBeGreaterThan(0);
    for (const seconds of windows) expect(seconds, 'a time in the authentication guide').toBe(replayWindowSeconds());
  });

  test('the page size is the limit parameter: a default within its maximum', () => {
    const { default: fallback, maximum } = pageSize();
    expect(fallback).toBeLessThanOrEqual(maximum);
    const limit = operation('listDeliveries').parameters.find((parameter) => parameter.name === 'limit');
    expect(limit, 'listDeliveries has a limit parameter').toBeDefined();
  });
});
