/**
 * The peer: the platform built the way most teams would build it. Express,
 * express-openapi-validator on the same bundled contract (generated/openapi/platform.json), a
 * Basic credentials check, partner calls made with fetch and, with BENCH_DATABASE_URL, PostgreSQL
 * through pg with one plain statement per step:
 *
 * - E1 calls E3; with BENCH_PEER_E1_STORES=1 it then inserts the payment. Without it (the E1
 *   path's peer, as the benchmark has always had it) it stores nothing, which flatters it.
 * - E2 reads the payment and, while it is in process, asks E4 (a terminal answer is written back).
 * - E5 updates the payment and inserts its E6 into an outbox table in one transaction; a poller
 *   takes the oldest unsent rows (as many as the contract's x-max-in-flight) under
 *   FOR UPDATE SKIP LOCKED, POSTs them with fetch, marks the delivered ones sent and commits;
 *   it polls again at once after a full batch, else after 100 ms. BENCH_DELIVERY=off stops it.
 * - E8 and the miniapp's event operation call the recipient's E7, log the event with an INSERT and
 *   answer with the recipient's body.
 *
 * Kept here for the benchmark only; it is not part of the product.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import express, { type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import pg from 'pg';
import { packageRoot } from '../../src/contract/documents.js';
import { deliveryLimits } from '../../src/platform/delivery/deliveryLimits.js';
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';

const env = process.env;
const hostappUrl = env.BENCH_HOSTAPP_URL!;
const miniappUrl = env.BENCH_MINIAPP_URL;
const base64 = (text: string) => Buffer.from(text).toString('base64');
/** What the peer sends: `Token` to the host app (its registered prefix), Basic to the miniapp. */
const toHostapp = `Token ${base64(`${env.BENCH_CLIENT_ID}:${env.BENCH_HOSTAPP_SECRET}`)}`;
const toMiniapp = `Basic ${base64(`${env.BENCH_APP_ID}:${env.BENCH_MINIAPP_SECRET}`)}`;
/** What the peer accepts: each partner's Basic credentials, and for E8 the host app's `Token` ones. */
const fromMiniapp = Buffer.from(toMiniapp);
const fromHostapp = Buffer.from(`Basic ${base64(`${env.BENCH_CLIENT_ID}:${env.BENCH_HOSTAPP_SECRET}`)}`);
const fromHostappEvents = Buffer.from(toHostapp);
const storesE1 = env.BENCH_PEER_E1_STORES === '1';
const pool = env.BENCH_DATABASE_URL ? new pg.Pool({ connectionString: env.BENCH_DATABASE_URL, max: 20 }) : undefined;
await pool?.query(`
  CREATE TABLE IF NOT EXISTS payments (
    client_id text NOT NULL, order_payment_id text NOT NULL, app_id text NOT NULL, miniapp_order_id text,
    amount numeric NOT NULL, currency text NOT NULL, order_data jsonb NOT NULL, status text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, order_payment_id));
  CREATE TABLE IF NOT EXISTS outbox (id bigserial PRIMARY KEY, payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz);
  CREATE INDEX IF NOT EXISTS outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
  CREATE TABLE IF NOT EXISTS event_log (id bigserial PRIMARY KEY, direction text NOT NULL, event jsonb NOT NULL,
    response text, created_at timestamptz NOT NULL DEFAULT now());`);
const database = () => {
  if (!pool) throw new Error('this peer has no database (BENCH_DATABASE_URL)');
  return pool;
};

function allowed(req: Request, expected: Buffer): boolean {
  const given = Buffer.from(req.headers.authorization ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** An Express handler that checks the caller's credentials and turns a thrown error into a 400. */
function operation(expected: Buffer, handle: (req: Request, res: Response) => Promise<void>) {
  return async (req: Request, res: Response) => {
    if (!allowed(req, expected)) {
      res.status(400).json({ error_code: 'UNAUTHORIZED', error_message: 'bad credentials' });
      return;
    }
    try {
      await handle(req, res);
    } catch (error) {
      res.status(400).json({ error_code: 'UNKNOWN_ERROR', error_message: (error as Error).message });
    }
  };
}

async function postJson<T>(url: string, authorization: string, body: unknown, headers: Record<string, string> = {}) {
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${url} answered ${answer.status}`);
  return { text, body: JSON.parse(text) as T };
}

const app = express();
app.use(express.json({ limit: '1mb' }));
app.use(
  OpenApiValidator.middleware({
    apiSpec: join(packageRoot(), 'generated', 'openapi', 'platform.json'),
    validateRequests: true,
    validateResponses: false,
    validateSecurity: false,
    ignoreUndocumented: true,
  }),
);

app.post(
  '/api/v1/orders/create-order-payment/',
  operation(fromMiniapp, async (req, res) => {
    const { app_id, client_id, order } = req.body as {
      app_id: string;
      client_id: string;
      order: { hostapp_user_id?: string; miniapp_order_id?: string; amount: string; currency: string };
    };
    let created: { order_payment_id?: string };
    try {
      ({ body: created } = await postJson<{ order_payment_id?: string }>(
        `${hostappUrl}/create-order-payment`,
        toHostapp,
        { app_id, order },
        order.hostapp_user_id ? { 'x-user-id': order.hostapp_user_id } : {},
      ));
      if (typeof created.order_payment_id !== 'string') throw new Error('bad E3 answer');
    } catch {
      res.status(400).json({ error_code: 'HOSTAPP_UNAVAILABLE', error_message: 'the host app did not answer' });
      return;
    }
    if (storesE1)
      await database().query(
        `INSERT INTO payments (client_id, order_payment_id, app_id, miniapp_order_id, amount, currency, order_data, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'in_process')`,
        [client_id, created.order_payment_id, app_id, order.miniapp_order_id ?? null, order.amount, order.currency, order],
      );
    res.json({ order_payment_id: created.order_payment_id });
  }),
);

app.post(
  '/api/v1/orders/get-payment-status/',
  operation(fromMiniapp, async (req, res) => {
    const { app_id, client_id, order_payment_id } = req.body as Record<string, string>;
    const { rows } = await database().query<{ status: string }>(
      'SELECT status FROM payments WHERE client_id = $1 AND order_payment_id = $2 AND app_id = $3',
      [client_id, order_payment_id, app_id],
    );
    if (!rows[0]) {
      res.status(400).json({ error_code: 'ORDER_NOT_FOUND', error_message: 'no such order payment' });
      return;
    }
    let status = rows[0].status;
    if (status === 'in_process') {
      const { body } = await postJson<{ payment_status: string }>(`${hostappUrl}/get-payment-status`, toHostapp, {
        app_id,
        client_id,
        order_payment_id,
      });
      if (body.payment_status !== 'in_process') {
        await database().query(
          `UPDATE payments SET status = $3, updated_at = now() WHERE client_id = $1 AND order_payment_id = $2 AND status = 'in_process'`,
          [client_id, order_payment_id, body.payment_status],
        );
        status = body.payment_status;
      }
    }
    res.json({ order_payment_id, app_id, client_id, payment_status: status });
  }),
);

app.post(
  '/api/v1/orders/complete-order/',
  operation(fromHostapp, async (req, res) => {
    const { app_id, client_id, order_payment_id, payment_status } = req.body as Record<string, string>;
    const client = await database().connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ miniapp_order_id: string | null }>(
        `UPDATE payments SET status = $4, updated_at = now()
         WHERE client_id = $1 AND order_payment_id = $2 AND app_id = $3 AND status = 'in_process' RETURNING miniapp_order_id`,
        [client_id, order_payment_id, app_id, payment_status],
      );
      if (rows[0]) {
        const completion = {
          miniapp_order_id: rows[0].miniapp_order_id,
          hostapp_order_payment_id: order_payment_id,
          hostapp_client_id: client_id,
          payment_status,
        };
        await client.query('INSERT INTO outbox (payload) VALUES ($1)', [completion]);
      }
      await client.query('COMMIT');
      if (!rows[0]) res.status(400).json({ error_code: 'PAYMENT_STATUS_CONFLICT', error_message: 'not in process' });
      else res.json({ code: 'SUCCESS', message: `order payment ${order_payment_id} is now ${payment_status}` });
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }),
);

function eventOperation(expected: Buffer, direction: 'hostapp_to_miniapp' | 'miniapp_to_hostapp') {
  return operation(expected, async (req, res) => {
    const { app_id, client_id, event_type, payload } = req.body as Record<string, unknown>;
    const event = { app_id, client_id, event_type, payload };
    const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
    const [url, authorization] =
      direction === 'hostapp_to_miniapp' ? [`${miniappUrl}/events`, toMiniapp] : [`${hostappUrl}/events`, toHostapp];
    const { text } = await postJson(url, authorization, event, { 'x-minibridge-event-id': eventId });
    await database().query('INSERT INTO event_log (direction, event, response) VALUES ($1, $2, $3)', [direction, event, text]);
    res.set('x-minibridge-event-id', eventId).type('application/json').send(text);
  });
}
app.post('/api/v1/events/hostapp/', eventOperation(fromHostappEvents, 'hostapp_to_miniapp'));
app.post('/api/v1/events/miniapp/', eventOperation(fromMiniapp, 'miniapp_to_hostapp'));

app.use((error: { status?: number; message?: string }, _req: Request, res: Response, _next: NextFunction) => {
  res.status(error.status ?? 500).json({ error_code: 'INVALID_ORDER_DATA', error_message: error.message });
});

/** The outbox poller: one transaction per batch, the rows locked while their E6s are sent. */
async function pollOutbox(batch: number): Promise<number> {
  const client = await database().connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ id: string; payload: unknown }>(
      'SELECT id, payload FROM outbox WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED',
      [batch],
    );
    const sent = await Promise.all(
      rows.map(async (row) => {
        try {
          const { body } = await postJson<{ code?: string }>(`${miniappUrl}/complete-order`, toMiniapp, row.payload, {
            'x-minibridge-event-id': `evt_${row.id}`,
            'x-minibridge-delivery-attempt': '1',
          });
          return body.code ? [row.id] : [];
        } catch {
          return [];
        }
      }),
    );
    if (sent.flat().length > 0) await client.query('UPDATE outbox SET sent_at = now() WHERE id = ANY($1)', [sent.flat()]);
    await client.query('COMMIT');
    return rows.length;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

let polling = pool !== undefined && env.BENCH_DELIVERY !== 'off';
const poller = (async () => {
  const batch = deliveryLimits().maxInFlightPerMiniapp;
  while (polling) {
    const taken = await pollOutbox(batch).catch(() => 0);
    if (taken < batch) await sleep(100);
  }
})();

const server = createServer(app);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce(localUrl(server)));
exitOnSignal(async () => {
  polling = false;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await poller;
  await pool?.end();
});
