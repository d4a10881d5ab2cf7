/**
 * Partner fault matrix: host app and miniapp servers that hang, refuse, answer 500, answer
 * non-JSON or a body that breaks their API, answer slowly, or drop the connection mid-answer.
 * E1/E2 must answer the documented code, events 502 EVENT_DELIVERY_FAILED, nothing may hang
 * past the contract's time-out (x-timeout-ms), and E6 must be retried on the contract's schedule.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { operation } from '../../src/contract/operations.js';
import { retrySchedule } from '../../src/platform/delivery/retrySchedule.js';
import { describeOnBackends } from '../support/databases.js';
import { HOSTAPP_PATHS, MINIAPP_PATHS, type Behaviour } from './support/fakePartner.js';
import { eventually, startHarness, type Harness } from './support/platformHarness.js';
import {
  ADMIN_TOKEN,
  completeOrder,
  createOrderPayment,
  deliveryOf,
  getPaymentStatus,
  sendHostappEvent,
  sendMiniappEvent,
} from './support/requests.js';

const E3_TIMEOUT_MS = operation('createHostappOrderPayment').timeoutMs!;
const E4_TIMEOUT_MS = operation('getHostappPaymentStatus').timeoutMs!;
const E7_TIMEOUT_MS = operation('receiveHostappEvent').timeoutMs!;
const schedule = retrySchedule();
const SLOW_MS = 1_500;

describeOnBackends('partner faults', (backend) => {
  let harness: Harness;
  let orderSeq = 0;
  const url = () => harness.running.url;
  const newOrder = async () => {
    const created = await createOrderPayment(url(), `fault-${Date.now()}-${orderSeq++}`);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return String(created.body.order_payment_id);
  };

  beforeAll(async () => {
    harness = await startHarness({ adminToken: ADMIN_TOKEN }, backend.name);
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  }, 60_000);
  afterEach(() => {
    for (const path of Object.values(HOSTAPP_PATHS)) harness.hostapp.behave(path, { kind: 'ok' });
    for (const path of Object.values(MINIAPP_PATHS)) harness.miniapp.behave(path, { kind: 'ok' });
  });

  /** The bad answers a partner can give, and the E1/E2 code each must become. */
  const hostappFaults: Array<{ name: string; behaviour: Behaviour; code: 'HOSTAPP_UNAVAILABLE' | 'HOSTAPP_INVALID_RESPONSE' }> = [
    { name: 'answers HTTP 500', behaviour: { kind: 'status', status: 500 }, code: 'HOSTAPP_UNAVAILABLE' },
    { name: 'answers HTTP 404', behaviour: { kind: 'status', status: 404 }, code: 'HOSTAPP_UNAVAILABLE' },
    { name: 'answers non-JSON', behaviour: { kind: 'notJson' }, code: 'HOSTAPP_INVALID_RESPONSE' },
    {
      name: 'answers a body that breaks its API',
      behaviour: { kind: 'invalidBody', body: '{"order_payment_id":12,"payment_status":7}' },
      code: 'HOSTAPP_INVALID_RESPONSE',
    },
    { name: 'closes the connection mid-answer', behaviour: { kind: 'closeMidResponse' }, code: 'HOSTAPP_UNAVAILABLE' },
  ];

  describe('host app server faults (E1 → E3, E2 → E4)', () => {
    for (const fault of hostappFaults) {
      it(`E1 and E2 answer 400 ${fault.code} when the host app ${fault.name}`, async () => {
        const orderPaymentId = await newOrder();
        harness.hostapp.behave(HOSTAPP_PATHS.createOrderPayment, fault.behaviour);
        harness.hostapp.behave(HOSTAPP_PATHS.paymentStatus, fault.behaviour);
        const created = await createOrderPayment(url(), `fault-${fault.name}-${orderSeq++}`);
        expect([created.status, created.body.error_code]).toEqual([400, fault.code]);
        // The message names what happened (an HTTP error answer is not a broken connection).
        if (fault.behaviour.kind === 'status') expect(created.body.error_message).toContain(`HTTP ${fault.behaviour.status}`);
        const status = await getPaymentStatus(url(), orderPaymentId);
        expect([status.status, status.body.error_code]).toEqual([400, fault.code]);
      });
    }

    it('E1 and E2 answer 400 HOSTAPP_UNAVAILABLE when the host app refuses connections', async () => {
      const orderPaymentId = await newOrder();
      const port = Number(new URL(harness.hostapp.url).port);
      await harness.hostapp.stop();
      try {
        const created = await createOrderPayment(url(), `fault-refused-${orderSeq++}`);
        expect([created.status, created.body.error_code]).toEqual([400, 'HOSTAPP_UNAVAILABLE']);
        const status = await getPaymentStatus(url(), orderPaymentId);
        expect([status.status, status.body.error_code]).toEqual([400, 'HOSTAPP_UNAVAILABLE']);
        const event = await sendMiniappEvent(url());
        expect([event.status, event.body.error_code]).toEqual([502, 'EVENT_DELIVERY_FAILED']);
      } finally {
        await harness.hostapp.start(port);
      }
    });

    it(`a slow host app (${SLOW_MS} ms, inside the time-outs) still succeeds`, async () => {
      const orderPaymentId = await newOrder();
      harness.hostapp.behave(HOSTAPP_PATHS.createOrderPayment, { kind: 'slow', ms: SLOW_MS });
      harness.hostapp.behave(HOSTAPP_PATHS.paymentStatus, { kind: 'slow', ms: SLOW_MS });
      const created = await createOrderPayment(url(), `fault-slow-${orderSeq++}`);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const status = await getPaymentStatus(url(), orderPaymentId);
      expect([status.status, status.body.payment_status]).toEqual([200, 'in_process']);
    });

    it('a failed E3 releases the idempotency key: the retry reaches the host app again', async () => {
      const miniappOrderId = `fault-retry-${orderSeq++}`;
      harness.hostapp.behave(HOSTAPP_PATHS.createOrderPayment, { kind: 'status', status: 500 });
      expect((await createOrderPayment(url(), miniappOrderId)).body.error_code).toBe('HOSTAPP_UNAVAILABLE');
      harness.hostapp.behave(HOSTAPP_PATHS.createOrderPayment, { kind: 'ok' });
      const before = harness.hostapp.count(HOSTAPP_PATHS.createOrderPayment);
      const retried = await createOrderPayment(url(), miniappOrderId);
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(harness.hostapp.count(HOSTAPP_PATHS.createOrderPayment)).toBe(before + 1);
    });
  });

  describe('event receiver faults (E8 and sendMiniappEvent → E7)', () => {
    const eventFaults: Array<{ name: string; behaviour: Behaviour }> = [
      { name: 'answers HTTP 500', behaviour: { kind: 'status', status: 500 } },
      { name: 'answers non-JSON', behaviour: { kind: 'notJson' } },
      { name: 'closes the connection mid-answer', behaviour: { kind: 'closeMidResponse' } },
    ];
    for (const fault of eventFaults) {
      it(`both directions answer 502 EVENT_DELIVERY_FAILED when the receiver ${fault.name}`, async () => {
        harness.miniapp.behave(MINIAPP_PATHS.events, fault.behaviour);
        harness.hostapp.behave(HOSTAPP_PATHS.events, fault.behaviour);
        const toMiniapp = await sendHostappEvent(url(), `fault-${orderSeq++}`);
        expect([toMiniapp.status, toMiniapp.body.error_code]).toEqual([502, 'EVENT_DELIVERY_FAILED']);
        const toHostapp = await sendMiniappEvent(url());
        expect([toHostapp.status, toHostapp.body.error_code]).toEqual([502, 'EVENT_DELIVERY_FAILED']);
      });
    }

    it('502 EVENT_DELIVERY_FAILED when the miniapp refuses connections; the resend carries the same event id', async () => {
      const port = Number(new URL(harness.miniapp.url).port);
      const externalEventId = `fault-refused-${orderSeq++}`;
      await harness.miniapp.stop();
      let failedEventId: string | null;
      try {
        const refused = await sendHostappEvent(url(), externalEventId);
        expect([refused.status, refused.body.error_code]).toEqual([502, 'EVENT_DELIVERY_FAILED']);
        failedEventId = refused.headers.get('x-minibridge-event-id');
      } finally {
        await harness.miniapp.start(port);
      }
      const resent = await sendHostappEvent(url(), externalEventId);
      expect(resent.status).toBe(200);
      expect(resent.headers.get('x-minibridge-event-id')).toBe(failedEventId);
      expect(harness.miniapp.requests(MINIAPP_PATHS.events).at(-1)!.headers['x-minibridge-event-id']).toBe(failedEventId);
    });

    it(`a slow receiver (${SLOW_MS} ms) still succeeds`, async () => {
      harness.miniapp.behave(MINIAPP_PATHS.events, { kind: 'slow', ms: SLOW_MS });
      const answer = await sendHostappEvent(url());
      expect([answer.status, answer.body]).toEqual([200, { received: true }]);
    });
  });

  describe('time-outs (the contract x-timeout-ms)', () => {
    // Each call must answer (the partner never does) and not before its time-out: elapsed time is
    // checked only from below, which a loaded machine cannot break. The test's limit bounds the rest.
    it(`hanging partners: E1 after ${E3_TIMEOUT_MS} ms, E2 after ${E4_TIMEOUT_MS} ms, events after ${E7_TIMEOUT_MS} ms`, async () => {
      const orderPaymentId = await newOrder();
      for (const path of [HOSTAPP_PATHS.createOrderPayment, HOSTAPP_PATHS.paymentStatus, HOSTAPP_PATHS.events])
        harness.hostapp.behave(path, { kind: 'hang' });
      harness.miniapp.behave(MINIAPP_PATHS.events, { kind: 'hang' });
      const timed = async <T>(call: () => Promise<T>) => {
        const started = performance.now();
        const answer = await call();
        return { answer, ms: performance.now() - started };
      };
      const [e1, e2, toMiniapp, toHostapp] = await Promise.all([
        timed(() => createOrderPayment(url(), `fault-hang-${orderSeq++}`)),
        timed(() => getPaymentStatus(url(), orderPaymentId)),
        timed(() => sendHostappEvent(url())),
        timed(() => sendMiniappEvent(url())),
      ]);
      const check = (result: typeof e1, status: number, code: string, timeoutMs: number) => {
        expect([result.answer.status, result.answer.body.error_code]).toEqual([status, code]);
        expect(result.ms).toBeGreaterThanOrEqual(timeoutMs - 50);
      };
      check(e1, 400, 'HOSTAPP_UNAVAILABLE', E3_TIMEOUT_MS);
      check(e2, 400, 'HOSTAPP_UNAVAILABLE', E4_TIMEOUT_MS);
      check(toMiniapp, 502, 'EVENT_DELIVERY_FAILED', E7_TIMEOUT_MS);
      check(toHostapp, 502, 'EVENT_DELIVERY_FAILED', E7_TIMEOUT_MS);
    }, 60_000);
  });

  describe('miniapp server faults on E6: retried on the contract schedule', () => {
    const firstDelay = { min: schedule.firstDelayMs * (1 - schedule.jitter), max: schedule.firstDelayMs * (1 + schedule.jitter) };
    const e6Faults: Array<{ name: string; behaviour: Behaviour }> = [
      { name: 'answers HTTP 500', behaviour: { kind: 'status', status: 500 } },
      { name: 'answers non-JSON', behaviour: { kind: 'notJson' } },
      { name: 'answers a body that breaks its API', behaviour: { kind: 'invalidBody', body: '{"code":5}' } },
      { name: 'answers with an error_code', behaviour: { kind: 'invalidBody', body: '{"error_code":"UNKNOWN_ERROR"}' } },
      { name: 'closes the connection mid-answer', behaviour: { kind: 'closeMidResponse' } },
      { name: 'refuses connections', behaviour: { kind: 'ok' } },
    ];

    for (const fault of e6Faults) {
      it(`a failed first attempt (${fault.name}) stays pending, next attempt ${firstDelay.min}-${firstDelay.max} ms later`, async () => {
        const orderPaymentId = await newOrder();
        harness.miniapp.behave(MINIAPP_PATHS.completeOrder, fault.behaviour);
        const refusing = fault.name === 'refuses connections';
        const port = Number(new URL(harness.miniapp.url).port);
        if (refusing) await harness.miniapp.stop();
        try {
          expect((await completeOrder(url(), orderPaymentId)).status).toBe(200);
          let delivery: Awaited<ReturnType<typeof deliveryOf>>;
          await eventually(
            async () => ((delivery = await deliveryOf(url(), orderPaymentId))?.attempts.length ?? 0) >= 1,
            20_000,
            'the first E6 attempt',
          );
          const [first] = delivery!.attempts;
          expect(first!.outcome).toBe('failed');
          expect(delivery!.status).toBe('pending');
          expect(delivery!.last_error).toBeTruthy();
          const spacing = Date.parse(delivery!.next_attempt_at!) - Date.parse(first!.started_at);
          expect(spacing).toBeGreaterThanOrEqual(firstDelay.min);
          // next_attempt_at is taken when the attempt ends: its duration, plus a little, may add up.
          expect(spacing).toBeLessThanOrEqual(firstDelay.max + first!.duration_ms + 1_000);
        } finally {
          if (refusing) await harness.miniapp.start(port);
        }
      });
    }

    it('a miniapp failing once gets the second attempt after the first delay, with the same event id', async () => {
      const orderPaymentId = await newOrder();
      harness.miniapp.behave(MINIAPP_PATHS.completeOrder, { kind: 'failFirst', times: 1 });
      const before = harness.miniapp.count(MINIAPP_PATHS.completeOrder);
      expect((await completeOrder(url(), orderPaymentId)).status).toBe(200);
      let delivery: Awaited<ReturnType<typeof deliveryOf>>;
      await eventually(
        async () => (delivery = await deliveryOf(url(), orderPaymentId))?.status === 'delivered',
        firstDelay.max + 15_000,
        'the E6 retry',
      );
      const [first, second] = delivery!.attempts;
      expect(delivery!.attempts.map((attempt) => attempt.outcome)).toEqual(['failed', 'delivered']);
      expect(first!.http_status, JSON.stringify(delivery)).toBe(503);
      expect(Date.parse(second!.started_at) - Date.parse(first!.started_at)).toBeGreaterThanOrEqual(firstDelay.min);
      const received = harness.miniapp
        .requests(MINIAPP_PATHS.completeOrder)
        .slice(before)
        .filter((request) => (request.body as { hostapp_order_payment_id?: string }).hostapp_order_payment_id === orderPaymentId);
      expect(received.map((request) => request.headers['x-minibridge-delivery-attempt'])).toEqual(['1', '2']);
      expect(received.map((request) => request.headers['x-minibridge-event-id'])).toEqual([delivery!.event_id, delivery!.event_id]);
    }, 40_000);

    it(`a slow miniapp (${SLOW_MS} ms) is delivered on the first attempt`, async () => {
      const orderPaymentId = await newOrder();
      harness.miniapp.behave(MINIAPP_PATHS.completeOrder, { kind: 'slow', ms: SLOW_MS });
      expect((await completeOrder(url(), orderPaymentId)).status).toBe(200);
      let delivery: Awaited<ReturnType<typeof deliveryOf>>;
      await eventually(async () => (delivery = await deliveryOf(url(), orderPaymentId))?.status === 'delivered', 20_000, 'the slow E6');
      expect(delivery!.attempts.map((attempt) => attempt.outcome)).toEqual(['delivered']);
    });
  });
});
