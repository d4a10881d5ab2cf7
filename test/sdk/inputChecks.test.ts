import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { check, schemaValidator } from '../../src/contract/operations.js';
import {
  createMinibridgeSdk,
  MinibridgeSdkError,
  MinibridgeWebAppCustomEvent,
  type MinibridgeSdk,
  type SdkErrorCode,
} from '../../src/shipped/sdk/index.js';
import { propertyRunOptions } from '../support/properties.js';
import { framePair, type FramePair } from './fakeWindows.js';

// Every check runs before anything leaves: each failing call must post nothing to the host.

let pair: FramePair;
let sdk: MinibridgeSdk;

function setUp(): void {
  pair = framePair();
  sdk = createMinibridgeSdk({ window: pair.miniapp });
}

afterEach(() => sdk?.close());

const valid = { amount: '125000.50', currency: 'VND', miniappOrderId: 'order-1', orderPaymentId: 'hop_1', extraParams: { note: 'gift' } };

async function payError(paymentData: unknown): Promise<MinibridgeSdkError> {
  setUp();
  const error = await sdk.pay(paymentData as never).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(MinibridgeSdkError);
  expect(pair.toHost).toEqual([]);
  return error as MinibridgeSdkError;
}

/** Starts a pay call and reports whether its message was posted (the input passed every check). */
function payPosts(paymentData: unknown): boolean {
  setUp();
  void sdk.pay(paymentData as never).catch(() => undefined);
  return pair.toHost.length === 1;
}

describe('pay input checks', () => {
  const cases: Array<[string, Record<string, unknown>, SdkErrorCode, RegExp?]> = [
    ['negative amount', { ...valid, amount: '-1' }, 'INVALID_AMOUNT', /at least 0/],
    ['negative number amount', { ...valid, amount: -5 }, 'INVALID_AMOUNT'],
    ['three decimals', { ...valid, amount: '1.005' }, 'INVALID_AMOUNT', /at most 20 digits and at most 2 after/],
    ['three decimals as a number', { ...valid, amount: 1.005 }, 'INVALID_AMOUNT'],
    ['21 digits', { ...valid, amount: '123456789012345678901' }, 'INVALID_AMOUNT'],
    ['exponent', { ...valid, amount: '1e5' }, 'INVALID_AMOUNT', /plain decimal/],
    ['number too large for exact digits', { ...valid, amount: 1e21 }, 'INVALID_AMOUNT'],
    ['a float sum', { ...valid, amount: 0.1 + 0.2 }, 'INVALID_AMOUNT'],
    ['NaN', { ...valid, amount: Number.NaN }, 'INVALID_AMOUNT'],
    ['Infinity', { ...valid, amount: Number.POSITIVE_INFINITY }, 'INVALID_AMOUNT'],
    ['leading zero', { ...valid, amount: '012' }, 'INVALID_AMOUNT'],
    ['plus sign', { ...valid, amount: '+12' }, 'INVALID_AMOUNT'],
    ['empty string', { ...valid, amount: '' }, 'INVALID_AMOUNT'],
    ['boolean', { ...valid, amount: true }, 'INVALID_AMOUNT', /decimal string or number/],
    ['null', { ...valid, amount: null }, 'INVALID_AMOUNT'],
    ['missing amount', { currency: 'VND', orderPaymentId: 'hop_1' }, 'INVALID_AMOUNT', /amount is required/],
    ['missing currency', { amount: '1', orderPaymentId: 'hop_1' }, 'INVALID_CURRENCY', /currency is required/],
    ['empty currency', { ...valid, currency: '' }, 'INVALID_CURRENCY'],
    ['currency over 20 characters', { ...valid, currency: 'C'.repeat(21) }, 'INVALID_CURRENCY', /20 characters/],
    ['numeric currency', { ...valid, currency: 704 }, 'INVALID_CURRENCY'],
    ['missing orderPaymentId', { amount: '1', currency: 'VND' }, 'INVALID_ORDER_PAYMENT_ID', /orderPaymentId is required/],
    ['undefined orderPaymentId', { ...valid, orderPaymentId: undefined }, 'INVALID_ORDER_PAYMENT_ID'],
    ['empty orderPaymentId', { ...valid, orderPaymentId: '' }, 'INVALID_ORDER_PAYMENT_ID'],
    ['orderPaymentId over 250', { ...valid, orderPaymentId: 'p'.repeat(251) }, 'INVALID_ORDER_PAYMENT_ID', /250 characters/],
    ['numeric orderPaymentId', { ...valid, orderPaymentId: 42 }, 'INVALID_ORDER_PAYMENT_ID'],
    ['miniappOrderId over 250', { ...valid, miniappOrderId: 'o'.repeat(251) }, 'INVALID_MINIAPP_ORDER_ID', /250 characters/],
    ['numeric miniappOrderId', { ...valid, miniappOrderId: 7 }, 'INVALID_MINIAPP_ORDER_ID'],
    ['extraParams array', { ...valid, extraParams: [1] }, 'INVALID_EXTRA_PARAMS'],
    ['extraParams string', { ...valid, extraParams: 'x' }, 'INVALID_EXTRA_PARAMS'],
    ['unknown member (a typo)', { ...valid, orderPaymentID: 'hop_1' }, 'INVALID_PAYMENT_DATA', /orderPaymentID/],
  ];

  it.each(cases)('%s → %s, nothing sent', async (_name, paymentData, code, message) => {
    const error = await payError(paymentData);
    expect(error.code).toBe(code);
    if (message) expect(error.message).toMatch(message);
  });

  it.each([null, undefined, 'hop_1', [valid], 42])('paymentData %j → INVALID_PAYMENT_DATA, nothing sent', async (paymentData) => {
    expect((await payError(paymentData)).code).toBe('INVALID_PAYMENT_DATA');
  });

  it.each([
    ['the full example', valid],
    ['only the required members', { amount: '1', currency: 'VND', orderPaymentId: 'hop_1' }],
    ['a number amount', { ...valid, amount: 12.3 }],
    ['zero', { ...valid, amount: 0 }],
    ['20 digits as a string', { ...valid, amount: '12345678901234567890' }],
    ['18 + 2 digits', { ...valid, amount: '123456789012345678.90' }],
    ['limits at their maximum', { ...valid, currency: 'C'.repeat(20), orderPaymentId: 'p'.repeat(250), miniappOrderId: 'o'.repeat(250) }],
    ['undefined optional members', { ...valid, miniappOrderId: undefined, extraParams: undefined }],
  ])('accepts %s', (_name, paymentData) => {
    expect(payPosts(paymentData)).toBe(true);
  });

  it('accepts exactly the amounts E1 accepts (the contract Decimal schema)', () => {
    const decimal = schemaValidator('platform', 'Decimal');
    const amounts = fc.oneof(
      fc.stringMatching(/^-?\d{0,22}(\.\d{0,3})?$/),
      fc.double({ noDefaultInfinity: false, noNaN: false }),
      fc.integer({ min: -10, max: Number.MAX_SAFE_INTEGER }),
      fc.bigInt({ min: 0n, max: 10n ** 22n }).map((n) => Number(n) / 100),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(amounts, (amount) => {
        expect(payPosts({ ...valid, amount })).toBe(check(decimal, amount).valid);
      }),
      propertyRunOptions('sdk pay amounts', 1000),
    );
  });
});

describe('custom event input checks', () => {
  const badNames: unknown[] = ['OtherWebAppCustomEvent', '', undefined, 'minibridgewebappcustomevent', 42];
  const badData: unknown[] = [
    { payload: 1 },
    { type: '' },
    { type: 7 },
    { type: 't'.repeat(101) },
    { type: 'ok', extra: 1 },
    null,
    [],
    'order_status_update',
  ];

  it.each(badNames)('send with event name %j → UNKNOWN_EVENT_NAME, thrown, nothing sent', (name) => {
    setUp();
    expect(() => sdk.send(name as never, { type: 'x' })).toThrow(expect.objectContaining({ code: 'UNKNOWN_EVENT_NAME' }));
    expect(pair.toHost).toEqual([]);
  });

  it.each(badNames)('sendPromise with event name %j → UNKNOWN_EVENT_NAME, rejected, nothing sent', async (name) => {
    setUp();
    await expect(sdk.sendPromise(name as never, { type: 'x' })).rejects.toMatchObject({ code: 'UNKNOWN_EVENT_NAME' });
    expect(pair.toHost).toEqual([]);
  });

  it.each(badData)('send with data %j → INVALID_EVENT_DATA, nothing sent', (data) => {
    setUp();
    expect(() => sdk.send(MinibridgeWebAppCustomEvent, data as never)).toThrow(
      expect.objectContaining({ name: 'MinibridgeSdkError', code: 'INVALID_EVENT_DATA' }),
    );
    expect(pair.toHost).toEqual([]);
  });

  it.each(badData)('sendPromise with data %j → INVALID_EVENT_DATA, nothing sent', async (data) => {
    setUp();
    await expect(sdk.sendPromise(MinibridgeWebAppCustomEvent, data as never)).rejects.toMatchObject({ code: 'INVALID_EVENT_DATA' });
    expect(pair.toHost).toEqual([]);
  });

  it.each([
    { type: 'opened' },
    { type: 'cart', payload: { items: [1, 2] } },
    { type: 'x', payload: null },
    { type: 't'.repeat(100), payload: 'text' },
  ])('send accepts %j', (data) => {
    setUp();
    sdk.send(MinibridgeWebAppCustomEvent, data);
    expect(pair.toHost).toHaveLength(1);
    expect(pair.toHost[0]!.message).toMatchObject({
      type: 'custom_event',
      eventName: MinibridgeWebAppCustomEvent,
      data,
      expectsReply: false,
    });
  });
});
