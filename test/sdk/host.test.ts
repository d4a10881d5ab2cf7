import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createHostBridge,
  createMinibridgeSdk,
  miniappFrameEndpoint,
  MinibridgeWebAppCustomEvent,
  type HostBridge,
  type HostBridgeOptions,
  type MinibridgeEvent,
  type MinibridgeSdk,
  type PaymentData,
} from '../../src/shipped/sdk/index.js';
import { flush, framePair, type FramePair } from './fakeWindows.js';

const MINIAPP_ORIGIN = 'https://miniapp.example';
const paymentData = { amount: 99.99, currency: 'USD', orderPaymentId: 'hop_9', extraParams: { seat: '12A' } };

let pair: FramePair;
let sdk: MinibridgeSdk;
let host: HostBridge | undefined;
let refused: string[];

beforeEach(() => {
  pair = framePair('https://host.example', MINIAPP_ORIGIN);
  sdk = createMinibridgeSdk({ window: pair.miniapp, hostOrigin: 'https://host.example' });
  refused = [];
});

afterEach(() => {
  sdk.close();
  host?.close();
});

function startHost(handlers: Partial<Pick<HostBridgeOptions, 'onPay' | 'onCustomEvent'>>, miniappOrigin = MINIAPP_ORIGIN): void {
  host = createHostBridge({
    endpoint: miniappFrameEndpoint(pair.host, () => pair.frame, miniappOrigin),
    onPay: handlers.onPay ?? (async () => 'success'),
    onCustomEvent: handlers.onCustomEvent,
    onRefused: (_data, reason) => refused.push(reason),
  });
}

/** Posts a raw message from the miniapp frame, bypassing the SDK's own checks. */
function miniappPostsRaw(message: unknown): void {
  pair.miniapp.parent!.postMessage(message, '*');
}

function lastAnswer(): Record<string, unknown> {
  return pair.toMiniapp.at(-1)!.message as Record<string, unknown>;
}

describe('pay through the host bridge', () => {
  it('hands the payment data to onPay and sends its status back with the payment data', async () => {
    const seen: PaymentData[] = [];
    startHost({ onPay: async (data) => (seen.push(data), 'cancelled') });
    await expect(sdk.pay(paymentData)).resolves.toEqual({ status: 'cancelled' });
    expect(seen).toEqual([paymentData]);
    expect(lastAnswer()).toMatchObject({ type: 'pay_result', paymentData: { ...paymentData, status: 'cancelled' } });
    expect(pair.toMiniapp.at(-1)!.targetOrigin).toBe(MINIAPP_ORIGIN);
  });

  it('a failing onPay is reported as failed', async () => {
    startHost({ onPay: async () => Promise.reject(new Error('card declined')) });
    await expect(sdk.pay(paymentData)).resolves.toEqual({ status: 'failed' });
  });

  it('a second pay while the sheet is open is refused with PAYMENT_IN_PROGRESS', async () => {
    let confirm: (status: 'success') => void = () => undefined;
    startHost({ onPay: () => new Promise((resolve) => (confirm = resolve)) });
    const first = sdk.pay(paymentData);
    await flush();
    await expect(sdk.pay({ ...paymentData, orderPaymentId: 'hop_10' })).rejects.toMatchObject({
      code: 'HOST_ERROR',
      hostCode: 'PAYMENT_IN_PROGRESS',
    });
    confirm('success');
    await expect(first).resolves.toEqual({ status: 'success' });
  });

  it('ignores messages from frames at another origin than the miniapp', async () => {
    startHost({}, 'https://another-miniapp.example');
    const result = sdk.pay(paymentData);
    await flush();
    expect(pair.toMiniapp).toEqual([]);
    sdk.close();
    await expect(result).rejects.toMatchObject({ code: 'CLOSED' });
  });
});

describe('the host checks what it receives', () => {
  beforeEach(() => startHost({}));

  it('a pay request that breaks the schema is answered with INVALID_MESSAGE and onPay is not called', async () => {
    let called = false;
    host!.close();
    startHost({ onPay: async () => ((called = true), 'success') });
    miniappPostsRaw({ protocol: 'minibridge-bridge', version: 1, id: 'r1', type: 'pay', paymentData: { ...paymentData, amount: '1.001' } });
    await flush();
    expect(called).toBe(false);
    expect(lastAnswer()).toMatchObject({
      type: 'error',
      replyTo: 'r1',
      error: { code: 'INVALID_MESSAGE', message: expect.stringMatching(/amount/) },
    });
    expect(refused).toHaveLength(1);
  });

  it('another protocol version is answered with UNSUPPORTED_VERSION', async () => {
    miniappPostsRaw({ protocol: 'minibridge-bridge', version: 2, id: 'r2', type: 'pay', paymentData });
    await flush();
    expect(lastAnswer()).toMatchObject({ type: 'error', version: 1, replyTo: 'r2', error: { code: 'UNSUPPORTED_VERSION' } });
  });

  it('an unknown type, and an answer or event sent to the host, are ignored without an answer', async () => {
    miniappPostsRaw({ protocol: 'minibridge-bridge', version: 1, id: 'r3', type: 'share' });
    miniappPostsRaw({
      protocol: 'minibridge-bridge',
      version: 1,
      id: 'r4',
      type: 'error',
      replyTo: 'x',
      error: { code: 'REJECTED', message: '' },
    });
    await flush();
    expect(pair.toMiniapp).toEqual([]);
    expect(refused).toEqual([]);
  });

  it('a message without a readable id is refused without an answer; other traffic is ignored', async () => {
    miniappPostsRaw({ protocol: 'minibridge-bridge', version: 1, type: 'pay', paymentData });
    miniappPostsRaw({ hello: 'world' });
    miniappPostsRaw('text');
    await flush();
    expect(pair.toMiniapp).toEqual([]);
    expect(refused).toHaveLength(1);
  });
});

describe('custom events through the host bridge', () => {
  it('sendPromise resolves with what onCustomEvent returns; send is delivered without an answer', async () => {
    const seen: unknown[] = [];
    startHost({ onCustomEvent: (data, context) => (seen.push({ data, context }), { accepted: data.type }) });
    await expect(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'add_to_cart', payload: { sku: 'A' } })).resolves.toEqual({
      accepted: 'add_to_cart',
    });
    const answersBefore = pair.toMiniapp.length;
    sdk.send(MinibridgeWebAppCustomEvent, { type: 'viewed' });
    await flush();
    expect(pair.toMiniapp).toHaveLength(answersBefore);
    expect(seen).toEqual([
      { data: { type: 'add_to_cart', payload: { sku: 'A' } }, context: { expectsReply: true } },
      { data: { type: 'viewed' }, context: { expectsReply: false } },
    ]);
  });

  it('a throwing onCustomEvent rejects sendPromise with HOST_REJECTED and its message', async () => {
    startHost({
      onCustomEvent: () => {
        throw new Error('not now');
      },
    });
    await expect(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'x' })).rejects.toMatchObject({
      code: 'HOST_REJECTED',
      hostCode: 'REJECTED',
      message: expect.stringMatching(/not now/),
    });
  });

  it('emit reaches subscribers; a detail that breaks the schema throws and sends nothing', async () => {
    startHost({});
    const seen: MinibridgeEvent[] = [];
    sdk.subscribe((event) => seen.push(event));
    host!.emit({ type: MinibridgeWebAppCustomEvent, data: { type: 'profile', payload: { name: 'An' } } });
    expect(() => host!.emit({ type: MinibridgeWebAppCustomEvent, data: { payload: 'no type' } })).toThrow(/schema/);
    await flush();
    expect(seen).toEqual([{ detail: { type: MinibridgeWebAppCustomEvent, data: { type: 'profile', payload: { name: 'An' } } } }]);
    expect(pair.toMiniapp).toHaveLength(1);
  });
});
