/**
 * One scenario per partner operation of the contract: how the platform is made to call it, how a
 * fake partner's answer is put in its place, and what "refused" and "accepted" mean in the
 * platform's answer and in its store. Tests build hostile answers; scenarios judge them.
 */
import type { ServerResponse } from 'node:http';
import { expect } from 'vitest';
import { basicAuthorization } from '../../../../src/wire/authorization.js';
import { parseLossless, stringifyLossless } from '../../../../src/contract/json.js';
import { contractOperations, operation } from '../../../../src/contract/operations.js';
import { loadDocument, resolve, type ApiName, type JsonObject } from '../../../../src/contract/documents.js';
import { answerLimits, type PartnerOperationId } from '../../../../src/platform/outbound/partnerCall.js';
import type { Received } from '../../../support/fakePartners.js';
import type { TestBackend } from '../../../support/databases.js';
import { ADMIN_TOKEN, e1Body, HOSTAPP, MINIAPP, PlatformHarness, type PlatformResponse } from '../../../support/platformHarness.js';
import { json, objectText, type AnswerWriter, type Member, type Written } from './answers.js';

/** A second host app that registered the GET variant of E4, and a second miniapp in both. */
export const GET_HOSTAPP = { id: 'ha_get', secret: 'hostapp-get-secret-1' };
export const TWIN_MINIAPP = { id: 'ma_twin', secret: 'miniapp-twin-secret-1' };

/** The partner operations, read from the contract: every operation of the host app and miniapp APIs. */
export function partnerOperationIds(): PartnerOperationId[] {
  return [...contractOperations().values()].filter((op) => op.api !== 'platform').map((op) => op.operationId as PartnerOperationId);
}

/**
 * The members of an operation's answer that name what it is about: the 200 answer's properties
 * that the request also carries (E4 echoes app_id, client_id and order_payment_id). Read from
 * the contract, through $ref, allOf and anyOf.
 */
export function aboutMembers(operationId: PartnerOperationId): string[] {
  const op = operation(operationId);
  const document = loadDocument(op.api as ApiName);
  const item = (document.paths as JsonObject)[op.path] as JsonObject;
  const raw = item[op.method.toLowerCase()] as JsonObject;
  const requestNames =
    op.method === 'GET'
      ? ((raw.parameters as unknown[]) ?? [])
          .map((p) => resolve(document, p))
          .filter((p) => p.in === 'query')
          .map((p) => String(p.name))
      : propertyNames(document, ((resolve(document, raw.requestBody).content as JsonObject)['application/json'] as JsonObject).schema);
  const answer = resolve(document, (raw.responses as JsonObject)['200']);
  const answerNames = propertyNames(document, ((answer.content as JsonObject)['application/json'] as JsonObject).schema);
  return answerNames.filter((name) => requestNames.includes(name));
}

function propertyNames(document: ReturnType<typeof loadDocument>, node: unknown): string[] {
  const schema = resolve(document, node);
  const own = Object.keys((schema.properties as JsonObject | undefined) ?? {});
  const nested = ['allOf', 'anyOf', 'oneOf'].flatMap((key) =>
    ((schema[key] as unknown[]) ?? []).flatMap((part) => propertyNames(document, part)),
  );
  return [...new Set([...own, ...nested])];
}

/** What one call through the platform produced, and the checks for each verdict. */
export interface Trial {
  /** The platform's answer: to the call that made the partner call, or the admin view of an E6 delivery. */
  response: PlatformResponse;
  /** What the fake partner's writers did, one entry per request answered with the hostile answer, once each has stopped. */
  writes(): Promise<Written[]>;
  /** The answer was refused with `code` (E6: a failed attempt); nothing of it was stored or forwarded. */
  refused(code: string, messageHint?: string): Promise<void>;
  /** The answer was taken: `sent` is the exact text the partner sent. */
  accepted(sent: string): Promise<void>;
}

export interface Scenario {
  operationId: PartnerOperationId;
  /** E7 answers are forwarded as bytes; the others are interpreted. */
  reading: 'interpreted' | 'forwarded';
  /** The code a too-large, non-JSON or out-of-contract answer becomes ('' for E6: a failed attempt). */
  invalidCode: string;
  /** The code a late answer becomes ('' for E6). */
  timeoutCode: string;
  maxAnswerBytes: number;
  timeoutMs: number;
  /** Required members whose value is a string. */
  requiredStrings: string[];
  /** The answer's member the platform stores (custom attributes), if any. */
  stored?: 'custom_attributes';
  /** The members of a valid answer to `request`. */
  valid(request: Received): Member[];
  /** Sets the platform up for one call (creating the order it needs) and returns the call; E3 may name the miniapp_order_id. */
  prepare(options?: { miniappOrderId?: string }): Promise<(answer: (request: Received) => AnswerWriter) => Promise<Trial>>;
}

let sequence = 0;
const next = (prefix: string) => `${prefix}-${process.pid}-${++sequence}`;

/** A harness with the test partners plus the GET host app and the twin miniapp. */
export async function startHostileHarness(backend: TestBackend['name'] = 'pglite'): Promise<PlatformHarness> {
  const harness = new PlatformHarness();
  await harness.start({
    backend,
    config: { rateLimit: { perSecond: 100_000, burst: 100_000 } },
    registry: (registry) => {
      const base = registry.hostapps[0]!;
      registry.hostapps.push({
        ...structuredClone(base),
        client_id: GET_HOSTAPP.id,
        secret_key: GET_HOSTAPP.secret,
        payment_status_method: 'GET',
        urls: {
          create_order_payment: `${harness.hostapp.url}/get/create-order-payment`,
          get_payment_status: `${harness.hostapp.url}/get/get-payment-status`,
          events: `${harness.hostapp.url}/events`,
        },
      });
      registry.miniapps[0]!.hostapps = [HOSTAPP.id, GET_HOSTAPP.id];
      registry.miniapps.push({ ...structuredClone(registry.miniapps[0]!), app_id: TWIN_MINIAPP.id, secret_key: TWIN_MINIAPP.secret });
    },
  });
  return harness;
}

/** What the store holds for one miniapp order: order payments recorded for it, idempotency keys held for it. */
async function orderSnapshot(harness: PlatformHarness, appId: string, miniappOrderId: string) {
  const [row] = await harness.running.platform.store.db.query<Record<string, unknown>>(
    `SELECT (SELECT count(*) FROM order_payments WHERE app_id = $1 AND miniapp_order_id = $2)::int AS payments,
            (SELECT count(*) FROM idempotency_keys WHERE key LIKE $3)::int AS keys`,
    [appId, miniappOrderId, `order:${encodeURIComponent(appId)}:%:${encodeURIComponent(miniappOrderId)}`],
  );
  return row;
}

async function orderRow(harness: PlatformHarness, clientId: string, orderPaymentId: string) {
  const [row] = await harness.running.platform.store.db.query<Record<string, unknown>>(
    `SELECT p.*, (SELECT count(*) FROM payment_status_history h WHERE h.client_id = p.client_id AND h.order_payment_id = p.order_payment_id)::int AS history,
            (SELECT count(*) FROM deliveries d WHERE d.client_id = p.client_id AND d.order_payment_id = p.order_payment_id)::int AS deliveries
     FROM order_payments p WHERE client_id = $1 AND order_payment_id = $2`,
    [clientId, orderPaymentId],
  );
  return row;
}

/** The stored form of a JSON text the partner sent: parsed without loss and written back. */
const storedForm = (text: string) => stringifyLossless(parseLossless(text));

/** The text of the member `name` in a JSON object text, as the platform would store it. */
function memberStoredForm(sent: string, name: string): string | null {
  const value = (parseLossless(sent) as Record<string, unknown>)[name];
  return value === undefined ? null : stringifyLossless(value);
}

/** Answers `{order_payment_id}` for every E3 on `path`: the way set-up orders are made. */
function answerE3(harness: PlatformHarness, path: string, id: () => string = () => next('hop')): void {
  harness.hostapp.on(path, (_request: Received, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(json({ order_payment_id: id() }));
  });
}

/** Makes an in_process order payment through the platform (E1 → a well-behaved E3). */
export async function createOrder(harness: PlatformHarness, options: { clientId?: string; appId?: string; miniappOrderId?: string } = {}) {
  const clientId = options.clientId ?? HOSTAPP.id;
  const appId = options.appId ?? MINIAPP.id;
  answerE3(harness, clientId === GET_HOSTAPP.id ? '/get/create-order-payment' : '/create-order-payment');
  const authorization = basicAuthorization(appId, appId === TWIN_MINIAPP.id ? TWIN_MINIAPP.secret : MINIAPP.secret);
  const created = await harness.call(
    'createOrderPayment',
    e1Body({ miniapp_order_id: options.miniappOrderId ?? next('ORD') }, { app_id: appId, client_id: clientId }),
    { authorization },
  );
  expect(created.status, created.text).toBe(200);
  return { order_payment_id: String(created.body.order_payment_id), app_id: appId, client_id: clientId };
}

/** Routes `path` to `answer` and records what each writer did. */
function install(
  harness: PlatformHarness,
  partner: 'hostapp' | 'miniapp',
  path: string,
  answer: (request: Received) => AnswerWriter,
  mine: (request: Received) => boolean,
  fallback: string,
) {
  const writers: Promise<Written>[] = [];
  harness[partner].on(path, async (request: Received, res: ServerResponse) => {
    if (!mine(request)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(fallback);
      return;
    }
    const writing = answer(request)(res);
    writers.push(writing);
    await writing;
  });
  // A writer stops when its answer ends or the platform hangs up; one still writing after this long was never cut.
  return () =>
    Promise.race([
      Promise.all(writers),
      new Promise<never>((_resolve, reject) =>
        setTimeout(() => reject(new Error('a partner answer was still being written 15 s after the platform answered')), 15_000).unref(),
      ),
    ]);
}

function limits(operationId: PartnerOperationId) {
  return answerLimits(operationId);
}

export function scenarios(harness: PlatformHarness): Map<PartnerOperationId, Scenario> {
  const e3: Scenario = {
    operationId: 'createHostappOrderPayment',
    reading: 'interpreted',
    invalidCode: 'HOSTAPP_INVALID_RESPONSE',
    timeoutCode: 'HOSTAPP_UNAVAILABLE',
    ...limits('createHostappOrderPayment'),
    requiredStrings: ['order_payment_id'],
    stored: 'custom_attributes',
    valid: () => [
      ['order_payment_id', json(next('hop'))],
      ['custom_attributes', json({ note: 'from E3' })],
    ],
    async prepare(options) {
      return async (answer) => {
        const miniappOrderId = options?.miniappOrderId ?? next('ORD');
        const writes = install(harness, 'hostapp', '/create-order-payment', answer, () => true, '{}');
        const before = await orderSnapshot(harness, MINIAPP.id, miniappOrderId);
        const body = e1Body({ miniapp_order_id: miniappOrderId });
        const response = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
        return {
          response,
          writes,
          async refused(code, hint) {
            expect([response.status, response.body.error_code], response.text).toEqual([400, code]);
            if (hint) expect(response.body.error_message).toContain(hint);
            // Nothing recorded, and the idempotency keys released: the same E1 can be retried.
            expect(await orderSnapshot(harness, MINIAPP.id, miniappOrderId)).toEqual(before);
            expect(before).toEqual({ payments: 0, keys: 0 });
            answerE3(harness, '/create-order-payment');
            const retried = await harness.call('createOrderPayment', body, { authorization: harness.miniappAuth() });
            expect(retried.status, retried.text).toBe(200);
          },
          async accepted(sent) {
            expect(response.status, response.text).toBe(200);
            const id = String((parseLossless(sent) as { order_payment_id: string }).order_payment_id);
            expect(response.body.order_payment_id).toBe(id);
            const row = await orderRow(harness, HOSTAPP.id, id);
            expect(row?.miniapp_order_id).toBe(miniappOrderId);
            expect(row?.custom_attributes).toBe(memberStoredForm(sent, 'custom_attributes'));
          },
        };
      };
    },
  };

  const e4 = (operationId: 'getHostappPaymentStatus' | 'queryHostappPaymentStatus', clientId: string, path: string): Scenario => ({
    operationId,
    reading: 'interpreted',
    invalidCode: 'HOSTAPP_INVALID_RESPONSE',
    timeoutCode: 'HOSTAPP_UNAVAILABLE',
    ...limits(operationId),
    requiredStrings: ['app_id', 'client_id', 'order_payment_id', 'payment_status'],
    stored: 'custom_attributes',
    valid: (request) => {
      const query = (request.method === 'GET' ? Object.fromEntries(new URLSearchParams(request.body)) : JSON.parse(request.body)) as Record<
        string,
        string
      >;
      return [
        ['app_id', json(query.app_id)],
        ['client_id', json(query.client_id)],
        ['order_payment_id', json(query.order_payment_id)],
        ['payment_status', json('paid')],
        ['custom_attributes', json({ note: 'from E4' })],
      ];
    },
    async prepare() {
      const order = await createOrder(harness, { clientId });
      return async (answer) => {
        const writes = install(harness, 'hostapp', path, answer, () => true, '{}');
        const before = await orderRow(harness, clientId, order.order_payment_id);
        const response = await harness.call('getPaymentStatus', order, { authorization: harness.miniappAuth() });
        return {
          response,
          writes,
          async refused(code, hint) {
            expect([response.status, response.body.error_code], response.text).toEqual([400, code]);
            if (hint) expect(response.body.error_message).toContain(hint);
            // Still in process, same attributes and history, and no E6 queued.
            expect(await orderRow(harness, clientId, order.order_payment_id)).toEqual(before);
            expect(before?.deliveries).toBe(0);
          },
          async accepted(sent) {
            expect(response.status, response.text).toBe(200);
            expect(response.body.payment_status).toBe('paid');
            const row = await orderRow(harness, clientId, order.order_payment_id);
            expect(row?.payment_status).toBe('paid');
            expect(row?.custom_attributes).toBe(memberStoredForm(sent, 'custom_attributes'));
            expect(row?.deliveries).toBe(1);
          },
        };
      };
    },
  });

  const e6: Scenario = {
    operationId: 'receiveOrderCompletion',
    reading: 'interpreted',
    invalidCode: '',
    timeoutCode: '',
    ...limits('receiveOrderCompletion'),
    requiredStrings: ['code'],
    valid: () => [['code', json('SUCCESS')]],
    async prepare() {
      const order = await createOrder(harness);
      return async (answer) => {
        const writes = install(
          harness,
          'miniapp',
          '/complete-order',
          answer,
          (request) => request.body.includes(json(order.order_payment_id)),
          '{"code":"SUCCESS"}',
        );
        const completed = await harness.call(
          'completeOrder',
          { ...order, payment_status: 'paid' },
          { authorization: harness.hostappBasic() },
        );
        expect(completed.status, completed.text).toBe(200);
        const db = harness.running.platform.store.db;
        const delivery = await harness.eventually(
          'the first E6 attempt',
          async () =>
            (
              await db.query<{ delivery_id: string }>(
                `SELECT delivery_id FROM deliveries WHERE order_payment_id = $1 AND attempts_made >= 1`,
                [order.order_payment_id],
              )
            )[0],
          e6.timeoutMs * 3,
        );
        const response = await harness.call('getDelivery', undefined, {
          path: `/api/v1/admin/deliveries/${delivery.delivery_id}`,
          authorization: `Bearer ${ADMIN_TOKEN}`,
        });
        expect(response.status, response.text).toBe(200);
        return {
          response,
          writes,
          async refused(_code, hint) {
            // Not acknowledged: the delivery stays pending for a retry, the attempt recorded as failed.
            expect(response.body.status).toBe('pending');
            const first = response.body.attempts[0];
            expect(first.outcome).toBe('failed');
            if (hint) expect(first.error).toContain(hint);
            expect(JSON.stringify(response.body).length).toBeLessThan(4096);
          },
          async accepted() {
            expect(response.body.status).toBe('delivered');
          },
        };
      };
    },
  };

  const e7 = (operationId: 'receiveHostappEvent' | 'receiveMiniappEvent'): Scenario => ({
    operationId,
    reading: 'forwarded',
    invalidCode: 'EVENT_DELIVERY_FAILED',
    timeoutCode: 'EVENT_DELIVERY_FAILED',
    ...limits(operationId),
    requiredStrings: [],
    valid: () => [
      ['received', 'true'],
      ['by', json(operationId)],
    ],
    async prepare() {
      return async (answer) => {
        const toHostapp = operationId === 'receiveHostappEvent';
        const writes = install(harness, toHostapp ? 'hostapp' : 'miniapp', '/events', answer, () => true, '{}');
        const event = { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'hostile_probe', payload: { n: next('e') } };
        const response = toHostapp
          ? await harness.call('sendMiniappEvent', event, { authorization: harness.miniappAuth() })
          : await harness.call('sendHostappEvent', event, { authorization: harness.hostappToken() });
        const eventId = response.headers.get('x-minibridge-event-id');
        const logged = async () =>
          (
            await harness.running.platform.store.db.query<{ outcome: string; receiver_response: string | null }>(
              `SELECT outcome, receiver_response FROM event_log WHERE event_id = $1 ORDER BY id DESC LIMIT 1`,
              [eventId],
            )
          )[0];
        return {
          response,
          writes,
          async refused(code, hint) {
            expect([response.status, response.body.error_code], response.text).toEqual([502, code]);
            if (hint) expect(response.body.error_message).toContain(hint);
            // Nothing of the receiver's answer is logged or passed to the sender.
            expect(await logged()).toEqual({ outcome: 'failed', receiver_response: null });
            expect(response.text.length).toBeLessThan(2048);
          },
          async accepted(sent) {
            expect(response.status, response.text).toBe(200);
            expect(response.text).toBe(sent);
            expect(await logged()).toEqual({ outcome: 'delivered', receiver_response: sent });
          },
        };
      };
    },
  });

  return new Map<PartnerOperationId, Scenario>([
    ['createHostappOrderPayment', e3],
    ['getHostappPaymentStatus', e4('getHostappPaymentStatus', HOSTAPP.id, '/get-payment-status')],
    ['queryHostappPaymentStatus', e4('queryHostappPaymentStatus', GET_HOSTAPP.id, '/get/get-payment-status')],
    ['receiveOrderCompletion', e6],
    ['receiveHostappEvent', e7('receiveHostappEvent')],
    ['receiveMiniappEvent', e7('receiveMiniappEvent')],
  ]);
}

export { objectText, storedForm };
