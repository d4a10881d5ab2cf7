import { describe, expect, it, vi } from 'vitest';
import { isLosslessNumber } from 'lossless-json';
import {
  createHostappRouter,
  decimalText,
  encodeUserIdHeader,
  prefixedAuthorization,
  signRequest,
  type HostappHandlers,
  type HostappRouterOptions,
  type RequestContext,
} from '../../src/shipped/partner-kit/index.js';
import { recordingLogger, send, servePerTest } from './support.js';

const clientId = 'ha_kit';
const secretKey = 'kit-host-secret';
const token = prefixedAuthorization('Token', clientId, secretKey);
const order = '{"app_id":"ma_kit","order":{"currency":"VND","amount":125000,"miniapp_order_id":"ORD-1"}}';
const statusQuery = '{"app_id":"ma_kit","client_id":"ha_kit","order_payment_id":"hop_1"}';
const event =
  '{"app_id":"ma_kit","client_id":"ha_kit","event_type":"order_status_update","payload":{"order_payment_id":"hop_1","fulfillment_status":"shipped"}}';

const serve = servePerTest();

function handlers(overrides: Partial<HostappHandlers> = {}): HostappHandlers {
  return {
    createOrderPayment: () => ({ order_payment_id: 'hop_1' }),
    getPaymentStatus: (query) => ({ ...query, payment_status: 'paid' }),
    receiveEvent: () => ({ received: true }),
    ...overrides,
  };
}

async function start(options: Partial<HostappRouterOptions> = {}): Promise<string> {
  return serve(createHostappRouter({ clientId, secretKey, handlers: handlers(), logger: recordingLogger(), ...options }));
}

describe('createHostappRouter: Authorization', () => {
  it('refuses a request without Authorization with HTTP 200 and UNAUTHORIZED', async () => {
    const createOrderPayment = vi.fn(() => ({ order_payment_id: 'hop_1' }));
    const url = await start({ handlers: handlers({ createOrderPayment }) });
    const answer = await send(`${url}/create-order-payment`, { body: order });
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body).toEqual({ error_code: 'UNAUTHORIZED' });
    expect(createOrderPayment).not.toHaveBeenCalled();
  });

  it('refuses wrong credentials and a wrong prefix', async () => {
    const url = await start();
    const wrongSecret = await send(`${url}/create-order-payment`, {
      body: order,
      headers: { authorization: prefixedAuthorization('Token', clientId, 'nope-nope') },
    });
    const wrongPrefix = await send(`${url}/create-order-payment`, {
      body: order,
      headers: { authorization: prefixedAuthorization('Basic', clientId, secretKey) },
    });
    expect(wrongSecret.body).toEqual({ error_code: 'UNAUTHORIZED' });
    expect(wrongPrefix.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });

  it('accepts the right credentials and passes X-User-ID in ctx', async () => {
    let seen: RequestContext | undefined;
    const url = await start({
      handlers: handlers({
        createOrderPayment: (_body, ctx) => {
          seen = ctx;
          return { order_payment_id: 'hop_1' };
        },
      }),
    });
    const answer = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token, 'x-user-id': 'u_1' } });
    expect(answer).toMatchObject({ status: 200, body: { order_payment_id: 'hop_1' } });
    expect(seen).toMatchObject({ operationId: 'createHostappOrderPayment', userId: 'u_1', userAccessToken: undefined, rawBody: order });
  });

  it('hands the handler X-User-ID decoded, and refuses a header that is not its percent-encoding (ADR 0016)', async () => {
    const seen: Array<string | undefined> = [];
    const url = await start({
      handlers: handlers({
        createOrderPayment: (_body, ctx) => {
          seen.push(ctx.userId);
          return { order_payment_id: 'hop_1' };
        },
      }),
    });
    const user = 'Nguyễn Văn A 100%';
    const encoded = await send(`${url}/create-order-payment`, {
      body: order,
      headers: { authorization: token, 'x-user-id': encodeUserIdHeader(user) },
    });
    expect(encoded.body).toEqual({ order_payment_id: 'hop_1' });
    expect(seen).toEqual([user]);
    for (const header of ['100%', '%e1', '%FF']) {
      const refused = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token, 'x-user-id': header } });
      expect(refused.body, header).toEqual({ error_code: 'INVALID_ORDER_DATA' });
    }
    expect(seen).toHaveLength(1);
  });

  it('uses the configured token prefix', async () => {
    const url = await start({ tokenPrefix: 'Bearer' });
    const withDefault = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token } });
    const withBearer = await send(`${url}/create-order-payment`, {
      body: order,
      headers: { authorization: prefixedAuthorization('Bearer', clientId, secretKey) },
    });
    expect(withDefault.body).toEqual({ error_code: 'UNAUTHORIZED' });
    expect(withBearer.body).toEqual({ order_payment_id: 'hop_1' });
  });

  it('accepts a user access token on E3/E4 only when acceptUserAccessToken says so', async () => {
    const acceptUserAccessToken = vi.fn((candidate: string) => candidate === 'user-token-ok');
    let seen: RequestContext | undefined;
    const url = await start({
      acceptUserAccessToken,
      handlers: handlers({
        getPaymentStatus: (query, ctx) => {
          seen = ctx;
          return { ...query, payment_status: 'in_process' };
        },
      }),
    });
    const good = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: 'Token user-token-ok' } });
    const bad = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: 'Token user-token-bad' } });
    const status = await send(`${url}/get-payment-status`, { body: statusQuery, headers: { authorization: 'Token user-token-ok' } });
    expect(good.body).toEqual({ order_payment_id: 'hop_1' });
    expect(bad.body).toEqual({ error_code: 'UNAUTHORIZED' });
    expect(status.body).toMatchObject({ payment_status: 'in_process' });
    expect(seen?.userAccessToken).toBe('user-token-ok');
  });

  it('never accepts a user access token on E7, whose security is the client credentials only', async () => {
    const url = await start({ acceptUserAccessToken: () => true });
    const answer = await send(`${url}/events`, {
      body: event,
      headers: { authorization: 'Token anything', 'x-minibridge-event-id': 'evt_1' },
    });
    expect(answer.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });

  it('refuses user access tokens when the option is off', async () => {
    const url = await start();
    const answer = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: 'Token user-token-ok' } });
    expect(answer.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });
});

describe('createHostappRouter: request signing', () => {
  const signingSecrets = ['kit-signing-secret-1'];

  it('requires a signature when signing secrets are given', async () => {
    const url = await start({ signingSecrets });
    const answer = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token } });
    expect(answer.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });

  it('accepts a valid signature over the raw body, from any active secret', async () => {
    const url = await start({ signingSecrets: ['kit-signing-secret-old', 'kit-signing-secret-new'] });
    const answer = await send(`${url}/create-order-payment`, {
      body: order,
      headers: { authorization: token, ...signRequest(order, ['kit-signing-secret-new']) },
    });
    expect(answer.body).toEqual({ order_payment_id: 'hop_1' });
  });

  it('refuses a signature over other bytes (the same JSON re-serialized)', async () => {
    const url = await start({ signingSecrets });
    const reformatted = JSON.stringify(JSON.parse(order), null, 1);
    const answer = await send(`${url}/create-order-payment`, {
      body: reformatted,
      headers: { authorization: token, ...signRequest(order, signingSecrets) },
    });
    expect(answer.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });

  it('refuses a stale timestamp', async () => {
    const url = await start({ signingSecrets });
    const tenMinutesAgo = Math.floor(Date.now() / 1000) - 600;
    const answer = await send(`${url}/create-order-payment`, {
      body: order,
      headers: { authorization: token, ...signRequest(order, signingSecrets, { nowSeconds: tenMinutesAgo }) },
    });
    expect(answer.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });

  it('refuses a replayed signature', async () => {
    const url = await start({ signingSecrets });
    const headers = { authorization: token, ...signRequest(order, signingSecrets) };
    const first = await send(`${url}/create-order-payment`, { body: order, headers });
    const replay = await send(`${url}/create-order-payment`, { body: order, headers });
    expect(first.body).toEqual({ order_payment_id: 'hop_1' });
    expect(replay.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });

  it('refuses a replay of a request signed in both schemes with either set of headers stripped (the platform signs in both until the sunset)', async () => {
    const url = await start({ signingSecrets });
    const signed = signRequest(order, signingSecrets);
    const { 'webhook-id': _id, 'webhook-timestamp': _timestamp, 'webhook-signature': _signature, ...legacyOnly } = signed;
    const { 'X-Minibridge-Timestamp': _legacyTimestamp, 'X-Minibridge-Signature': _legacySignature, ...standardOnly } = signed;
    const first = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token, ...signed } });
    expect(first.body).toEqual({ order_payment_id: 'hop_1' });
    for (const replay of [legacyOnly, standardOnly]) {
      expect((await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token, ...replay } })).body).toEqual({
        error_code: 'UNAUTHORIZED',
      });
    }
  });

  it('runs the handler once for an E3 signed with both of a rotation’s secrets, however its copies carry the signatures', async () => {
    const createOrderPayment = vi.fn(() => ({ order_payment_id: 'hop_1' }));
    const rotating = ['kit-signing-secret-old', 'kit-signing-secret-new'];
    const url = await start({ signingSecrets: rotating, handlers: handlers({ createOrderPayment }) });
    // As the platform signs during every rotation: one entry per active secret, in both schemes.
    const signed = signRequest(order, rotating);
    const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': standard } = signed;
    const { 'X-Minibridge-Timestamp': legacyTimestamp, 'X-Minibridge-Signature': legacy } = signed;
    const [standardOld, standardNew] = standard.split(' ');
    const [legacyOld, legacyNew] = legacy.split(', ');
    expect((await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token, ...signed } })).body).toEqual({
      order_payment_id: 'hop_1',
    });
    const copies: Record<string, string>[] = [
      { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': standardNew! },
      { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': standardOld! },
      { 'X-Minibridge-Timestamp': legacyTimestamp, 'X-Minibridge-Signature': legacyNew! },
      { 'X-Minibridge-Timestamp': legacyTimestamp, 'X-Minibridge-Signature': legacyOld! },
    ];
    for (const copy of copies)
      expect((await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token, ...copy } })).body).toEqual({
        error_code: 'UNAUTHORIZED',
      });
    expect(createOrderPayment).toHaveBeenCalledTimes(1);
  });

  it('verifies a GET request from its raw query string', async () => {
    const url = await start({ signingSecrets });
    const query = 'app_id=ma_kit&client_id=ha_kit&order_payment_id=hop%201';
    const good = await send(`${url}/get-payment-status?${query}`, {
      method: 'GET',
      headers: { authorization: token, ...signRequest(query, signingSecrets) },
    });
    const otherQuery = await send(`${url}/get-payment-status?${query.replace('hop%201', 'hop%202')}`, {
      method: 'GET',
      headers: { authorization: token, ...signRequest(query, signingSecrets) },
    });
    expect(good.body).toEqual({ app_id: 'ma_kit', client_id: 'ha_kit', order_payment_id: 'hop 1', payment_status: 'paid' });
    expect(otherQuery.body).toEqual({ error_code: 'UNAUTHORIZED' });
  });
});

describe('createHostappRouter: validation and answers', () => {
  it("answers an invalid body with HTTP 200 and the operation's invalid-request code from the contract", async () => {
    const url = await start();
    const headers = { authorization: token, 'x-minibridge-event-id': 'evt_1' };
    const e3 = await send(`${url}/create-order-payment`, { body: '{"app_id":"ma_kit","order":{"currency":"VND","amount":"-1"}}', headers });
    const e3Malformed = await send(`${url}/create-order-payment`, { body: '{"app_id":', headers });
    const e4 = await send(`${url}/get-payment-status`, { body: '{"app_id":"ma_kit"}', headers });
    const e7 = await send(`${url}/events`, { body: '{"event_type":"x"}', headers });
    expect([e3.status, e3Malformed.status, e4.status, e7.status]).toEqual([200, 200, 200, 200]);
    expect(e3.body).toEqual({ error_code: 'INVALID_ORDER_DATA' });
    expect(e3Malformed.body).toEqual({ error_code: 'INVALID_ORDER_DATA' });
    expect(e4.body).toEqual({ error_code: 'INVALID_REQUEST' });
    expect(e7.body).toEqual({ error_code: 'INVALID_EVENT_DATA' });
  });

  it('checks header parameters against the contract (E7 needs X-Minibridge-Event-Id)', async () => {
    const receiveEvent = vi.fn(() => ({ received: true }));
    const url = await start({ handlers: handlers({ receiveEvent }) });
    const answer = await send(`${url}/events`, { body: event, headers: { authorization: token } });
    expect(answer.body).toEqual({ error_code: 'INVALID_EVENT_DATA' });
    expect(receiveEvent).not.toHaveBeenCalled();
  });

  it('answers UNKNOWN_ERROR and logs when the handler throws', async () => {
    const logger = recordingLogger();
    const url = await start({
      logger,
      handlers: handlers({
        createOrderPayment: () => {
          throw new Error('payment database down');
        },
      }),
    });
    const answer = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token } });
    expect(answer).toMatchObject({ status: 200, body: { error_code: 'UNKNOWN_ERROR' } });
    expect(logger.lines).toEqual([
      expect.objectContaining({ level: 'error', message: expect.stringContaining('createHostappOrderPayment handler failed') }),
    ]);
  });

  it('answers UNKNOWN_ERROR with a clear log line when the handler answers a body that breaks the contract', async () => {
    const logger = recordingLogger();
    const url = await start({
      logger,
      handlers: handlers({
        getPaymentStatus: (query) => ({ ...query, payment_status: 'done' as never }),
      }),
    });
    const answer = await send(`${url}/get-payment-status`, { body: statusQuery, headers: { authorization: token } });
    expect(answer.body).toEqual({ error_code: 'UNKNOWN_ERROR' });
    expect(logger.lines[0]).toMatchObject({
      level: 'error',
      message: expect.stringMatching(
        /getHostappPaymentStatus handler answered a body that breaks the contract \(payment_status must be one of/,
      ),
    });
  });

  it('refuses an E3 answer with neither order_payment_id nor error_code', async () => {
    // The generated types already refuse this answer; the router must refuse it at run time too.
    const url = await start({ handlers: handlers({ createOrderPayment: (() => ({ custom_attributes: {} })) as never }) });
    const answer = await send(`${url}/create-order-payment`, { body: order, headers: { authorization: token } });
    expect(answer.body).toEqual({ error_code: 'UNKNOWN_ERROR' });
  });

  it("passes a handler's own error_code through", async () => {
    const url = await start({ handlers: handlers({ getPaymentStatus: () => ({ error_code: 'ORDER_NOT_FOUND' }) }) });
    const answer = await send(`${url}/get-payment-status`, { body: statusQuery, headers: { authorization: token } });
    expect(answer.body).toEqual({ error_code: 'ORDER_NOT_FOUND' });
  });

  it('keeps decimals exact through the helper, in and out', async () => {
    let amount: unknown;
    let subtotal: unknown;
    const url = await start({
      handlers: handlers({
        createOrderPayment: (body) => {
          amount = body.order.amount;
          subtotal = body.order.subtotal_amount;
          return { order_payment_id: 'hop_big', custom_attributes: { charged: body.order.amount, subtotal: body.order.subtotal_amount } };
        },
      }),
    });
    const big = '{"app_id":"ma_kit","order":{"currency":"VND","amount":12345678901234567890,"subtotal_amount":"12345678901234567.80"}}';
    const answer = await send(`${url}/create-order-payment`, { body: big, headers: { authorization: token } });
    expect(isLosslessNumber(amount)).toBe(true);
    expect(decimalText(amount)).toBe('12345678901234567890');
    expect(subtotal).toBe('12345678901234567.80');
    expect(answer.text).toBe(
      '{"order_payment_id":"hop_big","custom_attributes":{"charged":12345678901234567890,"subtotal":"12345678901234567.80"}}',
    );
  });

  it('serves the GET variant of E4 with the query as the handler input', async () => {
    const getPaymentStatus = vi.fn((query: { app_id: string; client_id: string; order_payment_id: string }, ctx: RequestContext) => ({
      ...query,
      payment_status: 'failed' as const,
      payment_fail_reason: `asked by ${ctx.operationId}`,
    }));
    const url = await start({ handlers: handlers({ getPaymentStatus }) });
    const answer = await send(`${url}/get-payment-status?app_id=ma_kit&client_id=ha_kit&order_payment_id=hop_7`, {
      method: 'GET',
      headers: { authorization: token },
    });
    const missing = await send(`${url}/get-payment-status?app_id=ma_kit&client_id=ha_kit`, {
      method: 'GET',
      headers: { authorization: token },
    });
    const twice = await send(`${url}/get-payment-status?app_id=ma_kit&client_id=ha_kit&order_payment_id=a&order_payment_id=b`, {
      method: 'GET',
      headers: { authorization: token },
    });
    expect(answer.body).toEqual({
      app_id: 'ma_kit',
      client_id: 'ha_kit',
      order_payment_id: 'hop_7',
      payment_status: 'failed',
      payment_fail_reason: 'asked by queryHostappPaymentStatus',
    });
    expect(missing.body).toEqual({ error_code: 'INVALID_REQUEST' });
    expect(twice.body).toEqual({ error_code: 'INVALID_REQUEST' });
    // As in bodies (ADR 0015): no repeated name, no __proto__, whether the contract declares the name or not.
    for (const extra of ['x=1&x=2', '__proto__=1', '%5F_proto__=1']) {
      const hostile = await send(`${url}/get-payment-status?app_id=ma_kit&client_id=ha_kit&order_payment_id=hop_7&${extra}`, {
        method: 'GET',
        headers: { authorization: token },
      });
      expect(hostile.body, extra).toEqual({ error_code: 'INVALID_REQUEST' });
    }
    expect(getPaymentStatus).toHaveBeenCalledTimes(1);
  });

  it('mounts operations at the registered paths given in `paths`', async () => {
    const url = await start({
      paths: { createOrderPayment: '/minibridge/e3', getPaymentStatus: '/minibridge/e4', events: '/minibridge/e7' },
    });
    const e3 = await send(`${url}/minibridge/e3`, { body: order, headers: { authorization: token } });
    const e4 = await send(`${url}/minibridge/e4?app_id=a&client_id=c&order_payment_id=o`, {
      method: 'GET',
      headers: { authorization: token },
    });
    const e7 = await send(`${url}/minibridge/e7`, { body: event, headers: { authorization: token, 'x-minibridge-event-id': 'evt_9' } });
    const old = await fetch(`${url}/create-order-payment`, { method: 'POST', body: order, headers: { authorization: token } });
    expect(e3.body).toEqual({ order_payment_id: 'hop_1' });
    expect(e4.body).toMatchObject({ payment_status: 'paid' });
    expect(e7.body).toEqual({ received: true });
    expect(old.status).toBe(404);
  });

  it('explains the mistake when a JSON body parser ran before the router', async () => {
    const { default: express } = await import('express');
    const logger = recordingLogger();
    const app = express();
    app.use(express.json());
    app.use(createHostappRouter({ clientId, secretKey, handlers: handlers(), logger }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const answer = await send(`http://127.0.0.1:${port}/create-order-payment`, { body: order, headers: { authorization: token } });
      expect(answer.body).toEqual({ error_code: 'UNKNOWN_ERROR' });
      expect(logger.lines[0].message).toMatch(/mount the partner-kit router before any JSON body parser/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
