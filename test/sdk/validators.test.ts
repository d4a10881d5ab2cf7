import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bundledBridgeSchema, VALIDATED_DEFINITIONS } from '../../scripts/build-sdk.js';
import { createAjv } from '../../src/contract/ajv.js';
import { validateMessage } from '../../src/shipped/sdk/validation.js';
import { propertyRunOptions } from '../support/properties.js';

// The SDK validates with code ajv generated at build time. These tests prove it decides exactly
// as the platform's own ajv set-up (src/contract/ajv.ts, with the x-decimal rule) decides on the
// bridge schema. That generated/sdk/ is what the sources produce is `npm run check`'s (its
// generated/ step rebuilds the SDK files and compares them byte for byte).

const schema = await bundledBridgeSchema();
// The schema's own x- annotations (x-error-codes) are registered as createAjv does for the APIs.
const ajv = createAjv([{ paths: {}, components: { schemas: schema.$defs as never } }]);
ajv.addSchema(schema);
const reference = (definition: string) => ajv.getSchema(`${schema.$id as string}#/$defs/${definition}`)!;

const text = (max: number) =>
  fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.constant('c'.repeat(max)),
    fc.constant('c'.repeat(max + 1)),
    fc.constant('😀'.repeat(max)),
    fc.integer(),
  );
const json = fc.jsonValue({ maxDepth: 2 });

/** Values tried at each path: valid ones and every kind of wrong one. */
const candidates: Record<string, fc.Arbitrary<unknown>> = {
  protocol: fc.constantFrom('minibridge-bridge', 'minibridge', 1),
  version: fc.constantFrom(1, 2, 0, '1', 1.5),
  id: fc.oneof(text(100), fc.constant('')),
  type: fc.constantFrom('pay', 'pay_result', 'custom_event', 'custom_event_result', 'host_event', 'error', 'other', ''),
  replyTo: fc.oneof(text(100), fc.constant(''), fc.constant(null)),
  'paymentData.amount': fc.oneof(fc.stringMatching(/^-?\d{0,21}(\.\d{0,3})?$/), fc.double(), fc.integer(), fc.constant(true)),
  'paymentData.currency': text(20),
  'paymentData.miniappOrderId': text(250),
  'paymentData.orderPaymentId': text(250),
  'paymentData.extraParams': fc.constantFrom({}, { a: 1 }, [], 'x'),
  'paymentData.status': fc.constantFrom('success', 'failed', 'cancelled', 'paid', ''),
  eventName: fc.constantFrom('MinibridgeWebAppCustomEvent', 'Other'),
  'data.type': text(100),
  'data.payload': json,
  expectsReply: fc.constantFrom(true, false, 'yes'),
  ok: fc.constantFrom(true, false),
  result: json,
  'error.code': text(100),
  'error.message': text(1000),
  'detail.type': fc.constantFrom('MinibridgeWebAppCustomEvent', 'other', ''),
  'detail.data': fc.oneof(json, fc.constant({ type: 'x', payload: 1 }), fc.constant({ payload: 1 })),
  junk: fc.constant(1),
  'paymentData.junk': fc.constant(1),
  'data.junk': fc.constant(1),
};

const envelope = { protocol: 'minibridge-bridge', version: 1, id: 'm-1' };
const payment = { amount: '10.50', currency: 'VND', miniappOrderId: 'o-1', orderPaymentId: 'hop_1', extraParams: { a: 1 } };
/** One valid message per definition; mutations of them reach both answers. */
const validMessages: Record<string, Record<string, unknown>> = {
  Envelope: { ...envelope, type: 'anything' },
  PayRequest: { ...envelope, type: 'pay', paymentData: payment },
  PayResult: { ...envelope, type: 'pay_result', replyTo: 'r-1', paymentData: { ...payment, status: 'success' } },
  CustomEventRequest: {
    ...envelope,
    type: 'custom_event',
    eventName: 'MinibridgeWebAppCustomEvent',
    data: { type: 'x', payload: [1] },
    expectsReply: true,
  },
  CustomEventResult: { ...envelope, type: 'custom_event_result', replyTo: 'r-1', ok: false, error: { code: 'REJECTED', message: 'no' } },
  HostEvent: { ...envelope, type: 'host_event', detail: { type: 'MinibridgeWebAppCustomEvent', data: { type: 'x' } } },
  BridgeError: { ...envelope, version: 2, type: 'error', replyTo: 'r-1', error: { code: 'INVALID_MESSAGE', message: 'bad' } },
};

const mutation = fc
  .tuple(fc.constantFrom(...Object.keys(candidates)), fc.boolean())
  .chain(([at, remove]) => (remove ? fc.constant(undefined) : candidates[at]!).map((value) => ({ at, remove, value })));

function mutated(
  base: Record<string, unknown>,
  mutations: Array<{ at: string; remove: boolean; value: unknown }>,
): Record<string, unknown> {
  const copy = structuredClone(base);
  for (const { at, remove, value } of mutations) {
    const [head, tail] = at.split('.') as [string, string | undefined];
    if (tail === undefined) {
      if (remove) delete copy[head];
      else copy[head] = value;
      continue;
    }
    const inner = copy[head];
    if (inner === null || typeof inner !== 'object') continue;
    if (remove) delete (inner as Record<string, unknown>)[tail];
    else (inner as Record<string, unknown>)[tail] = value;
  }
  return copy;
}

describe('generated validators', () => {
  it.each(VALIDATED_DEFINITIONS)('%s decides like ajv on the bridge schema', (definition) => {
    const expected = reference(definition);
    const base = validMessages[definition]!;
    expect(expected(base)).toBe(true);
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.array(mutation, { maxLength: 3 }), (mutations) => {
        const value = mutated(base, mutations);
        const ok = validateMessage(definition, value).ok;
        if (ok) accepted += 1;
        else refused += 1;
        expect(ok).toBe(expected(value));
      }),
      propertyRunOptions(`sdk validator ${definition}`, 3000),
    );
    // The generator must reach both answers often, or the comparison proves little.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('counts string lengths in characters as ajv does (not UTF-16 units)', () => {
    const withEmoji = {
      protocol: 'minibridge-bridge',
      version: 1,
      id: 'a',
      type: 'pay',
      paymentData: { amount: '1', currency: '😀'.repeat(20), orderPaymentId: 'p' },
    };
    expect(validateMessage('PayRequest', withEmoji).ok).toBe(true);
    expect(reference('PayRequest')(withEmoji)).toBe(true);
  });
});
