/**
 * The durable limit (issue 12): the raw node:http forwarder of `limit.ts` that also makes the two
 * PostgreSQL writes Minibridge makes per E1, batched: before E3 the request's idempotency key is
 * reserved, after E3 the order payment, its first history entry and the key marked done are
 * recorded in one statement. Each write is committed before the request moves on, and concurrent
 * requests' writes share one statement (src/platform/store/batch.ts, the batcher the platform uses). No
 * validation, no authentication, no logging: the floor for this job on this machine.
 */
import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import { batched, e1WriteBatching } from '../../src/platform/store/batch.js';
import { openPostgres } from '../../src/platform/store/db.js';
import { migrate } from '../../src/platform/store/migrate.js';
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';

const target = new URL(`${process.env.BENCH_HOSTAPP_URL}/create-order-payment`);
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const db = await openPostgres(process.env.BENCH_DATABASE_URL!);
await migrate(db);
const batching = e1WriteBatching;

interface Reserve {
  key: string;
  hash: string;
  reservationId: string;
}
interface Recorded {
  key: string;
  reservationId: string;
  orderPaymentId: string;
  appId: string;
  clientId: string;
  miniappOrderId: string;
  amount: string;
  currency: string;
  orderJson: string;
}

const reserve = batched<Reserve, boolean>(async (items) => {
  const rows = await db.query<{ key: string }>(
    `INSERT INTO idempotency_keys (key, request_hash, state, reservation_id, reserved_at)
     SELECT key, hash, 'pending', reservation_id, now() FROM json_to_recordset($1::json) AS r (key text, hash text, reservation_id uuid)
     ON CONFLICT (key) DO NOTHING RETURNING key`,
    // Rows as one JSON text, as the platform sends them (cheaper for the driver than arrays).
    [JSON.stringify(items.map((i) => ({ key: i.key, hash: i.hash, reservation_id: i.reservationId })))],
  );
  const reserved = new Set(rows.map((row) => row.key));
  return items.map((item) => reserved.has(item.key));
}, batching);

const record = batched<Recorded, boolean>(async (items) => {
  const rows = await db.query<{ order_payment_id: string }>(
    `WITH requested AS (
       SELECT * FROM json_to_recordset($1::json) AS r (order_payment_id text, app_id text, client_id text, miniapp_order_id text,
         amount_text text, currency text, order_json text, key text, reservation_id uuid)
     ),
     inserted AS (
       INSERT INTO order_payments (order_payment_id, app_id, client_id, miniapp_order_id, amount_text, amount, currency,
         order_json, payment_status, created_at, updated_at)
       SELECT order_payment_id, app_id, client_id, miniapp_order_id, amount_text, amount_text::numeric, currency, order_json,
         'in_process', now(), now() FROM requested
       ON CONFLICT (client_id, order_payment_id) DO NOTHING
       RETURNING client_id, order_payment_id, created_at
     ),
     history AS (
       INSERT INTO payment_status_history (client_id, order_payment_id, from_status, to_status, source, at)
       SELECT client_id, order_payment_id, NULL, 'in_process', 'E1', created_at FROM inserted
     ),
     completed AS (
       UPDATE idempotency_keys k SET state = 'done', order_payment_id = i.order_payment_id
       FROM inserted i JOIN requested r USING (client_id, order_payment_id)
       WHERE k.key = r.key AND k.reservation_id = r.reservation_id AND k.state = 'pending'
     )
     SELECT order_payment_id FROM inserted`,
    [
      JSON.stringify(
        items.map((i) => ({
          order_payment_id: i.orderPaymentId,
          app_id: i.appId,
          client_id: i.clientId,
          miniapp_order_id: i.miniappOrderId,
          amount_text: i.amount,
          currency: i.currency,
          order_json: i.orderJson,
          key: i.key,
          reservation_id: i.reservationId,
        })),
      ),
    ],
  );
  const inserted = new Set(rows.map((row) => row.order_payment_id));
  return items.map((item) => inserted.has(item.orderPaymentId));
}, batching);

interface E1 {
  app_id: string;
  client_id: string;
  order: { miniapp_order_id: string; amount: string; currency: string };
}

async function handle(body: Buffer): Promise<{ status: number; body: string }> {
  const e1 = JSON.parse(body.toString()) as E1;
  const key = `order:${e1.app_id}:${e1.client_id}:${e1.order.miniapp_order_id}`;
  const reservationId = randomUUID();
  const orderJson = JSON.stringify(e1.order);
  if (!(await reserve({ key, hash: orderJson, reservationId }))) return { status: 409, body: '{"error_code":"IDEMPOTENCY_CONFLICT"}' };
  const answer = await forward(body);
  const created = JSON.parse(answer) as { order_payment_id: string };
  const ok = await record({
    key,
    reservationId,
    orderPaymentId: created.order_payment_id,
    appId: e1.app_id,
    clientId: e1.client_id,
    miniappOrderId: e1.order.miniapp_order_id,
    amount: String(e1.order.amount),
    currency: e1.order.currency,
    orderJson,
  });
  return ok ? { status: 200, body: JSON.stringify({ order_payment_id: created.order_payment_id }) } : { status: 502, body: '{}' };
}

function forward(body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const upstream = request(
      target,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => resolve(Buffer.concat(chunks).toString()));
        answer.on('error', reject);
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    handle(Buffer.concat(chunks)).then(
      (answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body),
      () => res.writeHead(502).end(),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce(localUrl(server)));
exitOnSignal(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await db.close();
});
