import { describe, expect, it, vi } from 'vitest';
import {
  basicAuthorization,
  createMiniappRouter,
  MemoryAnswerStore,
  signRequest,
  type DeliveryContext,
  type MiniappHandlers,
  type MiniappRouterOptions,
} from '../../src/shipped/partner-kit/index.js';
import { recordingLogger, send, servePerTest } from './support.js';

const appId = 'ma_kit';
const secretKey = 'kit-mini-secret';
const basic = basicAuthorization(appId, secretKey);
const completion =
  '{"miniapp_order_id":"ORD-1","hostapp_order_payment_id":"hop_1","hostapp_client_id":"ha_kit","payment_status":"paid","custom_attributes":{"fee":0.10}}';
const event = '{"app_id":"ma_kit","client_id":"ha_kit","event_type":"user_profile_updated","payload":{"user_id":"u_1"}}';
const delivery = (eventId: string, attempt = 1) => ({
  authorization: basic,
  'x-minibridge-event-id': eventId,
  'x-minibridge-delivery-attempt': String(attempt),
});

const serve = servePerTest();

function handlers(overrides: Partial<MiniappHandlers> = {}): MiniappHandlers {
  return {
    receiveOrderCompletion: () => ({ code: 'SUCCESS' }),
    receiveEvent: (received, ctx) => ({ received: true, event_id: ctx.eventId, type: received.event_type }),
    ...overrides,
  };
}

async function start(options: Partial<MiniappRouterOptions> = {}): Promise<string> {
  return serve(createMiniappRouter({ appId, secretKey, handlers: handlers(), logger: recordingLogger(), ...options }));
}

describe('createMiniappRouter', () => {
  it('requires Basic base64(app_id:secret_key)', async () => {
    const url = await start();
    const missing = await send(`${url}/complete-order`, {
      body: completion,
      headers: { 'x-minibridge-event-id': 'evt_1', 'x-minibridge-delivery-attempt': '1' },
    });
    const wrong = await send(`${url}/complete-order`, {
      body: completion,
      headers: { ...delivery('evt_1'), authorization: basicAuthorization(appId, 'not-the-secret') },
    });
    const right = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_1') });
    expect([missing.status, wrong.status, right.status]).toEqual([200, 200, 200]);
    expect(missing.body).toEqual({ error_code: 'UNAUTHORIZED' });
    expect(wrong.body).toEqual({ error_code: 'UNAUTHORIZED' });
    expect(right.body).toEqual({ code: 'SUCCESS' });
  });

  it('gives the handler the event id and delivery attempt', async () => {
    let seen: DeliveryContext | undefined;
    const url = await start({
      handlers: handlers({
        receiveOrderCompletion: (_body, ctx) => {
          seen = ctx;
          return { code: 'SUCCESS' };
        },
      }),
    });
    await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_ctx', 3) });
    expect(seen).toMatchObject({ operationId: 'receiveOrderCompletion', eventId: 'evt_ctx', deliveryAttempt: 3 });
  });

  it('answers invalid callbacks and events with the contract codes', async () => {
    const url = await start();
    const badStatus = await send(`${url}/complete-order`, { body: completion.replace('"paid"', '"refunded"'), headers: delivery('evt_2') });
    const noAttempt = await send(`${url}/complete-order`, {
      body: completion,
      headers: { authorization: basic, 'x-minibridge-event-id': 'evt_3' },
    });
    const badEvent = await send(`${url}/events`, { body: '{"app_id":"ma_kit"}', headers: delivery('evt_4') });
    expect(badStatus.body).toEqual({ error_code: 'INVALID_REQUEST' });
    expect(noAttempt.body).toEqual({ error_code: 'INVALID_REQUEST' });
    expect(badEvent.body).toEqual({ error_code: 'INVALID_EVENT_DATA' });
  });

  it('replays the first answer for a repeated event id without calling the handler again (default)', async () => {
    let calls = 0;
    const url = await start({
      handlers: handlers({
        receiveOrderCompletion: () => ({ code: `SUCCESS_${++calls}` }),
        receiveEvent: () => ({ received: true, call: ++calls }),
      }),
    });
    const first = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_same', 1) });
    const retry = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_same', 2) });
    const other = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_other', 1) });
    const eventFirst = await send(`${url}/events`, { body: event, headers: delivery('evt_same') });
    const eventRepeat = await send(`${url}/events`, { body: event, headers: delivery('evt_same') });
    expect(first.body).toEqual({ code: 'SUCCESS_1' });
    expect(retry.text).toBe(first.text);
    expect(other.body).toEqual({ code: 'SUCCESS_2' });
    // E6 and E7 ids are separate namespaces: the same id on E7 is a different event.
    expect(eventFirst.text).toBe('{"received":true,"call":3}');
    expect(eventRepeat.text).toBe('{"received":true,"call":3}');
    expect(calls).toBe(3);
  });

  it('answers concurrent repeats of one event id from a single handler call', async () => {
    const receiveOrderCompletion = vi.fn(async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { code: 'SUCCESS' };
    });
    const url = await start({ handlers: handlers({ receiveOrderCompletion }) });
    const answers = await Promise.all(
      [1, 2, 3].map((attempt) => send(`${url}/complete-order`, { body: completion, headers: delivery('evt_race', attempt) })),
    );
    expect(answers.map((answer) => answer.body)).toEqual([{ code: 'SUCCESS' }, { code: 'SUCCESS' }, { code: 'SUCCESS' }]);
    expect(receiveOrderCompletion).toHaveBeenCalledTimes(1);
  });

  it('does not remember error answers, so a retry runs the handler again', async () => {
    let known = false;
    const url = await start({
      handlers: handlers({
        receiveOrderCompletion: () => {
          if (!known) {
            known = true;
            return { error_code: 'ORDER_NOT_FOUND' };
          }
          return { code: 'SUCCESS' };
        },
      }),
    });
    const first = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_retry', 1) });
    const retry = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_retry', 2) });
    expect(first.body).toEqual({ error_code: 'ORDER_NOT_FOUND' });
    expect(retry.body).toEqual({ code: 'SUCCESS' });
  });

  it("calls the handler for every delivery with idempotency: 'off'", async () => {
    const receiveOrderCompletion = vi.fn(() => ({ code: 'SUCCESS' }));
    const url = await start({ idempotency: 'off', handlers: handlers({ receiveOrderCompletion }) });
    await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_off', 1) });
    await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_off', 2) });
    expect(receiveOrderCompletion).toHaveBeenCalledTimes(2);
  });

  it('uses a given AnswerStore, shared between routers (instances)', async () => {
    const store = new MemoryAnswerStore();
    const receiveOrderCompletion = vi.fn(() => ({ code: 'SUCCESS' }));
    const first = await serve(
      createMiniappRouter({ appId, secretKey, idempotency: store, handlers: handlers({ receiveOrderCompletion }) }),
    );
    const second = await serve(
      createMiniappRouter({ appId, secretKey, idempotency: store, handlers: handlers({ receiveOrderCompletion }) }),
    );
    await send(`${first}/complete-order`, { body: completion, headers: delivery('evt_shared', 1) });
    const again = await send(`${second}/complete-order`, { body: completion, headers: delivery('evt_shared', 2) });
    expect(again.body).toEqual({ code: 'SUCCESS' });
    expect(receiveOrderCompletion).toHaveBeenCalledTimes(1);
  });

  it('answers UNKNOWN_ERROR when the handler throws or answers nothing, and does not remember it', async () => {
    const logger = recordingLogger();
    let calls = 0;
    const url = await start({
      logger,
      handlers: handlers({
        receiveOrderCompletion: () => {
          calls += 1;
          if (calls === 1) throw new Error('boom');
          return { code: 'SUCCESS' };
        },
        receiveEvent: () => undefined as never,
      }),
    });
    const failed = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_boom', 1) });
    const retried = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_boom', 2) });
    const nothing = await send(`${url}/events`, { body: event, headers: delivery('evt_nothing') });
    expect(failed.body).toEqual({ error_code: 'UNKNOWN_ERROR' });
    expect(retried.body).toEqual({ code: 'SUCCESS' });
    expect(nothing.body).toEqual({ error_code: 'UNKNOWN_ERROR' });
    expect(logger.lines.map((line) => line.message)).toEqual([
      expect.stringContaining('receiveOrderCompletion handler failed'),
      expect.stringContaining('receiveMiniappEvent handler answered a body that breaks the contract'),
    ]);
  });

  it('verifies signatures on callbacks when signing secrets are given', async () => {
    const signingSecrets = ['kit-mini-signing-1'];
    const url = await start({ signingSecrets });
    const unsigned = await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_s1') });
    const signed = await send(`${url}/complete-order`, {
      body: completion,
      headers: { ...delivery('evt_s2'), ...signRequest(completion, signingSecrets) },
    });
    expect(unsigned.body).toEqual({ error_code: 'UNAUTHORIZED' });
    expect(signed.body).toEqual({ code: 'SUCCESS' });
  });

  it('keeps decimals in callbacks exact', async () => {
    let fee: unknown;
    const url = await start({
      handlers: handlers({
        receiveOrderCompletion: (body) => {
          fee = (body.custom_attributes as { fee: unknown }).fee;
          return { code: 'SUCCESS' };
        },
      }),
    });
    await send(`${url}/complete-order`, { body: completion, headers: delivery('evt_fee') });
    expect(String(fee)).toBe('0.10');
  });
});
