import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BRIDGE_PROTOCOL,
  BRIDGE_PROTOCOL_VERSION,
  createMinibridgeSdk,
  DEFAULT_SEND_TIMEOUT_MS,
  MinibridgeSdkError,
  MinibridgeWebAppCustomEvent,
  type MinibridgeEvent,
  type MinibridgeSdk,
} from '../../src/shipped/sdk/index.js';
import { FakeWindow, flush, framePair, type FramePair } from './fakeWindows.js';

const HOST_ORIGIN = 'https://host.example';
const paymentData = { amount: '10.50', currency: 'VND', miniappOrderId: 'order-1', orderPaymentId: 'hop_1' };

let pair: FramePair;
let sdk: MinibridgeSdk;
let invalid: Array<{ data: unknown; reason: string }>;

beforeEach(() => {
  pair = framePair(HOST_ORIGIN);
  invalid = [];
  sdk = createMinibridgeSdk({ window: pair.miniapp, onInvalidMessage: (data, reason) => invalid.push({ data, reason }) });
});

afterEach(() => {
  sdk.close();
  vi.useRealTimers();
});

/** The request the SDK posted most recently. */
function lastRequest(): { id: string; type: string } {
  const last = pair.toHost.at(-1);
  if (!last) throw new Error('nothing was sent to the host');
  return last.message as { id: string; type: string };
}

let replies = 0;
/** Posts a message from the host frame to the miniapp, with the envelope filled in. */
function hostSends(message: Record<string, unknown>): void {
  replies += 1;
  pair.frame.postMessage({ protocol: BRIDGE_PROTOCOL, version: BRIDGE_PROTOCOL_VERSION, id: `host-${replies}`, ...message }, '*');
}

function payResult(replyTo: string, status: string, orderPaymentId = paymentData.orderPaymentId): Record<string, unknown> {
  return { type: 'pay_result', replyTo, paymentData: { ...paymentData, orderPaymentId, status } };
}

/** Settles a promise into a value to assert on, so a rejection never goes unhandled. */
function outcome<T>(promise: Promise<T>): Promise<{ value?: T; error?: MinibridgeSdkError }> {
  return promise.then(
    (value) => ({ value }),
    (error: MinibridgeSdkError) => ({ error }),
  );
}

describe('the request message', () => {
  it('pay posts one PayRequest with protocol, version and a fresh id to the parent', async () => {
    const first = outcome(sdk.pay(paymentData));
    const second = outcome(sdk.pay({ ...paymentData, orderPaymentId: 'hop_2' }));
    expect(pair.toHost).toHaveLength(2);
    const [a, b] = pair.toHost.map((posted) => posted.message as Record<string, unknown>);
    expect(a).toEqual({ protocol: 'minibridge-bridge', version: 1, id: expect.any(String), type: 'pay', paymentData });
    expect(a!.id).not.toBe(b!.id);
    expect(pair.toHost[0]!.targetOrigin).toBe('*');
    sdk.close();
    expect((await first).error?.code).toBe('CLOSED');
    expect((await second).error?.code).toBe('CLOSED');
  });

  it('posts only to hostOrigin when it is configured', () => {
    sdk.close();
    sdk = createMinibridgeSdk({ window: pair.miniapp, hostOrigin: HOST_ORIGIN });
    sdk.send(MinibridgeWebAppCustomEvent, { type: 'opened' });
    expect(pair.toHost[0]!.targetOrigin).toBe(HOST_ORIGIN);
  });
});

describe('matching answers to requests', () => {
  it('pay resolves with the status of the pay_result that answers it', async () => {
    const result = sdk.pay(paymentData);
    hostSends(payResult(lastRequest().id, 'success'));
    await expect(result).resolves.toEqual({ status: 'success' });
  });

  it.each(['success', 'failed', 'cancelled'])('passes status %s through', async (status) => {
    const result = sdk.pay(paymentData);
    hostSends(payResult(lastRequest().id, status));
    await expect(result).resolves.toEqual({ status });
  });

  it('answers are matched by replyTo, whatever their order', async () => {
    const first = sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'one' });
    const firstId = lastRequest().id;
    const second = sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'two' });
    const secondId = lastRequest().id;
    hostSends({ type: 'custom_event_result', replyTo: secondId, ok: true, result: 'for two' });
    hostSends({ type: 'custom_event_result', replyTo: firstId, ok: true, result: { for: 'one' } });
    await expect(first).resolves.toEqual({ for: 'one' });
    await expect(second).resolves.toBe('for two');
  });

  it('an answer to an unknown id settles nothing', async () => {
    const result = outcome(sdk.pay(paymentData));
    hostSends(payResult('someone-else', 'success'));
    await flush();
    const settled = await Promise.race([result, flush().then(() => 'pending')]);
    expect(settled).toBe('pending');
    hostSends(payResult(lastRequest().id, 'cancelled'));
    expect((await result).value).toEqual({ status: 'cancelled' });
  });

  it('only the first answer counts', async () => {
    const result = sdk.pay(paymentData);
    const { id } = lastRequest();
    hostSends(payResult(id, 'failed'));
    hostSends(payResult(id, 'success'));
    await expect(result).resolves.toEqual({ status: 'failed' });
    await flush();
    expect(invalid).toEqual([]);
  });

  it('a pay_result for another order payment rejects with INVALID_MESSAGE', async () => {
    const result = outcome(sdk.pay(paymentData));
    hostSends(payResult(lastRequest().id, 'success', 'hop_other'));
    expect((await result).error).toMatchObject({ code: 'INVALID_MESSAGE', message: expect.stringMatching(/hop_other/) });
  });

  it('an answer of the wrong type rejects with INVALID_MESSAGE', async () => {
    const result = outcome(sdk.pay(paymentData));
    hostSends({ type: 'custom_event_result', replyTo: lastRequest().id, ok: true });
    expect((await result).error?.code).toBe('INVALID_MESSAGE');
  });

  it('an answer that breaks the schema rejects the request it names with INVALID_MESSAGE', async () => {
    const result = outcome(sdk.pay(paymentData));
    hostSends(payResult(lastRequest().id, 'paid')); // payment_status, not an SDK status
    expect((await result).error).toMatchObject({ code: 'INVALID_MESSAGE', message: expect.stringMatching(/status/) });
  });

  it('an answer with another protocol version rejects with INVALID_MESSAGE', async () => {
    const result = outcome(sdk.pay(paymentData));
    hostSends({ ...payResult(lastRequest().id, 'success'), version: 2 });
    expect((await result).error?.code).toBe('INVALID_MESSAGE');
  });

  it('an error message rejects with HOST_ERROR and the host code', async () => {
    const result = outcome(sdk.pay(paymentData));
    hostSends({ type: 'error', version: 2, replyTo: lastRequest().id, error: { code: 'UNSUPPORTED_VERSION', message: 'speaks 2' } });
    expect((await result).error).toMatchObject({ name: 'MinibridgeSdkError', code: 'HOST_ERROR', hostCode: 'UNSUPPORTED_VERSION' });
  });

  it('custom_event_result ok: false rejects sendPromise with HOST_REJECTED', async () => {
    const result = outcome(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'buy' }));
    hostSends({ type: 'custom_event_result', replyTo: lastRequest().id, ok: false, error: { code: 'REJECTED', message: 'out of stock' } });
    expect((await result).error).toMatchObject({
      code: 'HOST_REJECTED',
      hostCode: 'REJECTED',
      message: expect.stringMatching(/out of stock/),
    });
  });

  it('ok: false without an error breaks the schema', async () => {
    const result = outcome(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'buy' }));
    hostSends({ type: 'custom_event_result', replyTo: lastRequest().id, ok: false });
    expect((await result).error?.code).toBe('INVALID_MESSAGE');
  });
});

describe('what the SDK does not listen to', () => {
  it('messages from another frame, even well-formed answers, are ignored', async () => {
    const result = outcome(sdk.pay(paymentData));
    const { id } = lastRequest();
    pair.postFromStranger({ protocol: BRIDGE_PROTOCOL, version: 1, id: 'x', ...payResult(id, 'success') });
    await flush();
    expect(await Promise.race([result, flush().then(() => 'pending')])).toBe('pending');
    hostSends(payResult(id, 'failed'));
    expect((await result).value).toEqual({ status: 'failed' });
  });

  it('with hostOrigin set, messages from the parent at another origin are ignored', async () => {
    sdk.close();
    sdk = createMinibridgeSdk({ window: pair.miniapp, hostOrigin: 'https://other-host.example' });
    const result = outcome(sdk.pay(paymentData));
    hostSends(payResult(lastRequest().id, 'success'));
    await flush();
    expect(await Promise.race([result, flush().then(() => 'pending')])).toBe('pending');
  });

  it('non-bridge traffic is ignored silently; bridge messages that break the schema are reported', async () => {
    hostSends({ protocol: 'something-else', type: 'pay_result' });
    pair.frame.postMessage('hello', '*');
    pair.frame.postMessage(null, '*');
    await flush();
    expect(invalid).toEqual([]);
    hostSends({ type: 'host_event' }); // no detail
    await flush();
    expect(invalid).toHaveLength(1);
    expect(invalid[0]!.reason).toMatch(/detail/);
  });

  it('message types of a later protocol version are ignored', async () => {
    hostSends({ type: 'theme_changed', theme: 'dark' });
    await flush();
    expect(invalid).toEqual([]);
  });
});

describe('message types named like Object.prototype members', () => {
  it('are ignored like any type the SDK does not know, and answers still arrive', async () => {
    const result = outcome(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'buy' }));
    const { id } = lastRequest();
    // A plain object looked up by type would find Object.prototype's members and throw in the listener.
    for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])
      hostSends({ type, replyTo: id, ok: true, result: 'not from the host' });
    await flush();
    hostSends({ type: 'custom_event_result', replyTo: id, ok: true, result: 'from the host' });
    expect(await result).toEqual({ value: 'from the host' });
    expect(invalid).toEqual([]);
  });
});

describe('subscribe', () => {
  it('delivers host events as { detail: { type, data } } until unsubscribed', async () => {
    const seen: MinibridgeEvent[] = [];
    const alsoSeen: MinibridgeEvent[] = [];
    const unsubscribe = sdk.subscribe((event) => seen.push(event));
    sdk.subscribe((event) => alsoSeen.push(event));
    hostSends({ type: 'host_event', detail: { type: MinibridgeWebAppCustomEvent, data: { type: 'coupon', payload: { code: 'X1' } } } });
    hostSends({ type: 'host_event', detail: { type: 'visibility', data: 'hidden' } });
    await flush();
    expect(seen).toEqual([
      { detail: { type: 'MinibridgeWebAppCustomEvent', data: { type: 'coupon', payload: { code: 'X1' } } } },
      { detail: { type: 'visibility', data: 'hidden' } },
    ]);
    unsubscribe();
    hostSends({ type: 'host_event', detail: { type: 'visibility', data: 'visible' } });
    await flush();
    expect(seen).toHaveLength(2);
    expect(alsoSeen).toHaveLength(3);
  });

  it('a custom event whose data has no type is not delivered', async () => {
    const seen: MinibridgeEvent[] = [];
    sdk.subscribe((event) => seen.push(event));
    hostSends({ type: 'host_event', detail: { type: MinibridgeWebAppCustomEvent, data: { payload: 1 } } });
    await flush();
    expect(seen).toEqual([]);
    expect(invalid).toHaveLength(1);
  });
});

describe('time-outs', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });

  it(`sendPromise rejects with TIMEOUT after the default ${DEFAULT_SEND_TIMEOUT_MS} ms, and a late answer changes nothing`, async () => {
    expect(DEFAULT_SEND_TIMEOUT_MS).toBe(30_000);
    const result = outcome(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'slow' }));
    const { id } = lastRequest();
    await vi.advanceTimersByTimeAsync(DEFAULT_SEND_TIMEOUT_MS - 1);
    expect(await Promise.race([result, flush().then(() => 'pending')])).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect((await result).error).toMatchObject({ code: 'TIMEOUT' });
    hostSends({ type: 'custom_event_result', replyTo: id, ok: true });
    await flush();
    expect(invalid).toEqual([]);
  });

  it('the time-out is configurable per SDK and per call', async () => {
    sdk.close();
    sdk = createMinibridgeSdk({ window: pair.miniapp, timeoutMs: 500 });
    const perSdk = outcome(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'a' }));
    const perCall = outcome(sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'b' }, { timeoutMs: 100 }));
    await vi.advanceTimersByTimeAsync(100);
    expect((await perCall).error?.code).toBe('TIMEOUT');
    expect(await Promise.race([perSdk, flush().then(() => 'pending')])).toBe('pending');
    await vi.advanceTimersByTimeAsync(400);
    expect((await perSdk).error?.code).toBe('TIMEOUT');
  });

  it('an answer in time clears the timer', async () => {
    const result = sdk.sendPromise(MinibridgeWebAppCustomEvent, { type: 'quick' });
    hostSends({ type: 'custom_event_result', replyTo: lastRequest().id, ok: true, result: 1 });
    await expect(result).resolves.toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('pay waits without a time-out by default, and payTimeoutMs bounds it', async () => {
    const unbounded = outcome(sdk.pay(paymentData));
    expect(vi.getTimerCount()).toBe(0);
    sdk.close();
    expect((await unbounded).error?.code).toBe('CLOSED');
    sdk = createMinibridgeSdk({ window: pair.miniapp, payTimeoutMs: 60_000 });
    const bounded = outcome(sdk.pay(paymentData));
    await vi.advanceTimersByTimeAsync(60_000);
    expect((await bounded).error?.code).toBe('TIMEOUT');
  });
});

describe('without a host', () => {
  it('a top-level page without a native handler rejects with NO_HOST and sends nothing', async () => {
    const alone = new FakeWindow('https://miniapp.example');
    alone.parent = alone;
    const lonely = createMinibridgeSdk({ window: alone });
    await expect(lonely.pay(paymentData)).rejects.toMatchObject({ code: 'NO_HOST' });
    await expect(lonely.sendPromise(MinibridgeWebAppCustomEvent, { type: 'x' })).rejects.toMatchObject({ code: 'NO_HOST' });
    expect(() => lonely.send(MinibridgeWebAppCustomEvent, { type: 'x' })).toThrow(MinibridgeSdkError);
  });

  it('after close, calls reject with CLOSED and the window listener is gone', async () => {
    expect(pair.miniapp.listenerCount).toBe(1);
    sdk.close();
    expect(pair.miniapp.listenerCount).toBe(0);
    await expect(sdk.pay(paymentData)).rejects.toMatchObject({ code: 'CLOSED' });
  });
});

describe('native web view', () => {
  it('sends JSON text to the injected handler and reads answers the host posts to the window', async () => {
    const page = new FakeWindow('https://miniapp.example') as FakeWindow & { webkit?: unknown };
    page.parent = page;
    const sent: string[] = [];
    page.webkit = { messageHandlers: { minibridge: { postMessage: (text: string) => sent.push(text) } } };
    const native = createMinibridgeSdk({ window: page });
    const result = native.pay(paymentData);
    expect(sent).toHaveLength(1);
    const request = JSON.parse(sent[0]!) as { id: string; paymentData: unknown };
    expect(request.paymentData).toEqual(paymentData);
    // evaluateJavascript("window.postMessage(<JSON>, '*')"), here as JSON text (Android's postWebMessage)
    page.postMessage(JSON.stringify({ protocol: BRIDGE_PROTOCOL, version: 1, id: 'n1', ...payResult(request.id, 'success') }), '*');
    await expect(result).resolves.toEqual({ status: 'success' });
    native.close();
  });

  it('uses the Android interface when there is no WebKit handler', () => {
    const page = new FakeWindow('https://miniapp.example') as FakeWindow & { MinibridgeAndroid?: unknown };
    const sent: string[] = [];
    page.MinibridgeAndroid = { postMessage: (text: string) => sent.push(text) };
    const native = createMinibridgeSdk({ window: page });
    native.send(MinibridgeWebAppCustomEvent, { type: 'opened', payload: { at: 1 } });
    expect(JSON.parse(sent[0]!)).toMatchObject({ type: 'custom_event', data: { type: 'opened', payload: { at: 1 } }, expectsReply: false });
    native.close();
  });
});
