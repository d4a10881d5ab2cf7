/**
 * The durable limit of every path: a raw node:http forwarder that makes the durable reads and
 * writes Minibridge makes for the path, each committed before the request moves on, and
 * concurrent requests' statements batched into one (src/platform/store/batch.ts, the batcher
 * the platform uses), on the platform's own schema (its migrations). No validation, no
 * authentication, no logging: the floor for each job on this machine.
 *
 * - E1: the idempotency key reserved before E3; after it the order payment, its first history
 *   entry and the key marked done, in one statement.
 * - E2: the order payment read; in process, E4 asked (a terminal answer is recorded as E5's is).
 * - E5: the status change, its history entry and its E6 delivery, in one statement.
 * - E6: due deliveries leased (at most the contract's x-max-in-flight open), each sent to the
 *   miniapp, its attempt recorded with the delivery's new state. BENCH_DELIVERY=off stops it.
 * - E8 and the miniapp's event operation: E7 at the recipient, then the event logged.
 */
import { hash, randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import { deliveryLimits } from '../../src/platform/delivery/deliveryLimits.js';
import { batched, e1WriteBatching } from '../../src/platform/store/batch.js';
import { openPostgres } from '../../src/platform/store/db.js';
import { migrate } from '../../src/platform/store/migrate.js';
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';

const hostappUrl = process.env.BENCH_HOSTAPP_URL!;
const miniappUrl = process.env.BENCH_MINIAPP_URL!;
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const db = await openPostgres(process.env.BENCH_DATABASE_URL!);
await migrate(db);
const batching = e1WriteBatching;

/** Runs `sql` once for a batch, its rows passed as one JSON text (as the platform sends them). */
function batchedStatement<I, R, O>(sql: string, answer: (items: I[], rows: R[]) => O[]) {
  return batched<I, O>(async (items) => answer(items, await db.query<R>(sql, [JSON.stringify(items)])), batching);
}

const reserve = batchedStatement<{ key: string; hash: string; reservation_id: string }, { key: string }, boolean>(
  `INSERT INTO idempotency_keys (key, request_hash, state, reservation_id, reserved_at)
   SELECT key, hash, 'pending', reservation_id, now() FROM json_to_recordset($1::json) AS r (key text, hash text, reservation_id uuid)
   ON CONFLICT (key) DO NOTHING RETURNING key`,
  (items, rows) => {
    const reserved = new Set(rows.map((row) => row.key));
    return items.map((item) => reserved.has(item.key));
  },
);

interface Recorded {
  key: string;
  reservation_id: string;
  order_payment_id: string;
  app_id: string;
  client_id: string;
  miniapp_order_id: string;
  amount_text: string;
  currency: string;
  order_json: string;
}

const record = batchedStatement<Recorded, { order_payment_id: string }, boolean>(
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
  (items, rows) => {
    const inserted = new Set(rows.map((row) => row.order_payment_id));
    return items.map((item) => inserted.has(item.order_payment_id));
  },
);

interface PaymentRef {
  order_payment_id: string;
  app_id: string;
  client_id: string;
}

/** E2's read: the payment's status, or undefined when there is no such payment. */
const readStatus = batchedStatement<PaymentRef & { i: number }, { i: number; payment_status: string }, string | undefined>(
  `SELECT r.i, p.payment_status FROM json_to_recordset($1::json) AS r (i int, client_id text, order_payment_id text, app_id text)
   JOIN order_payments p ON p.client_id = r.client_id AND p.order_payment_id = r.order_payment_id AND p.app_id = r.app_id`,
  (items, rows) => {
    const found = new Map(rows.map((row) => [row.i, row.payment_status]));
    return items.map((item) => found.get(item.i));
  },
);
let nextRead = 0;

/** E5 (or a terminal E4): the change, its history entry and its E6 delivery; false when nothing changed. */
const transition = batchedStatement<
  PaymentRef & { payment_status: string; source: string; delivery_id: string; event_id: string },
  { delivery_id: string },
  boolean
>(
  `WITH requested AS (
     SELECT * FROM json_to_recordset($1::json) AS r (client_id text, order_payment_id text, app_id text, payment_status text,
       source text, delivery_id uuid, event_id text)
   ),
   updated AS (
     UPDATE order_payments p SET payment_status = r.payment_status, updated_at = now()
     FROM requested r
     WHERE p.client_id = r.client_id AND p.order_payment_id = r.order_payment_id AND p.app_id = r.app_id
       AND p.payment_status = 'in_process'
     RETURNING p.*, r.source, r.delivery_id, r.event_id
   ),
   history AS (
     INSERT INTO payment_status_history (client_id, order_payment_id, from_status, to_status, source, at)
     SELECT client_id, order_payment_id, 'in_process', payment_status, source, updated_at FROM updated
   ),
   delivery AS (
     INSERT INTO deliveries (delivery_id, event_id, client_id, order_payment_id, app_id, payment_status, body, status,
       next_attempt_at, horizon_started_at, created_at)
     SELECT delivery_id, event_id, client_id, order_payment_id, app_id, payment_status,
       json_strip_nulls(json_build_object('miniapp_order_id', miniapp_order_id, 'hostapp_order_payment_id', order_payment_id,
         'hostapp_client_id', client_id, 'payment_status', payment_status))::text,
       'pending', updated_at, updated_at, updated_at FROM updated
   )
   SELECT delivery_id::text FROM updated`,
  (items, rows) => {
    const applied = new Set(rows.map((row) => row.delivery_id));
    return items.map((item) => applied.has(item.delivery_id));
  },
);

interface LoggedEvent {
  event_id: string;
  direction: string;
  app_id: string;
  client_id: string;
  event_type: string;
  external_event_id: string | null;
  payload: string;
  outcome: string;
  receiver_http_status: number;
  receiver_response: string | null;
  duration_ms: number;
}

const logEvent = batchedStatement<LoggedEvent, unknown, void>(
  `INSERT INTO event_log (event_id, direction, app_id, client_id, event_type, external_event_id, payload, outcome,
     receiver_http_status, receiver_response, duration_ms, at)
   SELECT event_id, direction, app_id, client_id, event_type, external_event_id, payload, outcome, receiver_http_status,
     receiver_response, duration_ms, now()
   FROM json_to_recordset($1::json) AS r (event_id text, direction text, app_id text, client_id text, event_type text,
     external_event_id text, payload text, outcome text, receiver_http_status int, receiver_response text, duration_ms int)`,
  (items) => items.map(() => undefined),
);

interface Claimed {
  delivery_id: string;
  lease_id: string;
  event_id: string;
  body: string;
  attempts_made: number;
}

const claimStatement = `UPDATE deliveries SET lease_id = gen_random_uuid(), lease_until = now() + interval '60 seconds'
  WHERE delivery_id IN (
    SELECT delivery_id FROM deliveries
    WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
    ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
  RETURNING delivery_id::text, lease_id::text, event_id, body, attempts_made`;

const recordAttempt = batchedStatement<
  { delivery_id: string; lease_id: string; ok: boolean; started_at: string; duration_ms: number; http_status: number | null },
  unknown,
  void
>(
  `WITH input AS (
     SELECT * FROM json_to_recordset($1::json) AS i (delivery_id uuid, lease_id uuid, ok boolean, started_at timestamptz,
       duration_ms int, http_status int)
   ),
   recorded AS (
     UPDATE deliveries d SET attempts_made = d.attempts_made + 1,
       status = CASE WHEN i.ok THEN 'delivered' ELSE 'pending' END,
       next_attempt_at = CASE WHEN i.ok THEN NULL ELSE now() + interval '1 second' END,
       delivered_at = CASE WHEN i.ok THEN now() END, lease_id = NULL, lease_until = NULL
     FROM input i WHERE d.delivery_id = i.delivery_id AND d.lease_id = i.lease_id
     RETURNING d.delivery_id, d.attempts_made, i.ok, i.started_at, i.duration_ms, i.http_status
   )
   INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status)
   SELECT delivery_id, attempts_made, started_at, duration_ms, CASE WHEN ok THEN 'delivered' ELSE 'failed' END, http_status
   FROM recorded`,
  (items) => items.map(() => undefined),
);

/**
 * The E6 loop: up to x-max-in-flight attempts open at once, from a queue of leased deliveries
 * refilled in batches (one claim statement per x-max-in-flight deliveries or so: a claim runs when
 * at most that many are held, and leases up to twice as many), attempts recorded in batches.
 */
const delivery = (() => {
  const maxInFlight = deliveryLimits().maxInFlightPerMiniapp;
  const leased: Claimed[] = [];
  let inFlight = 0;
  let claiming = false;
  let wokenWhileClaiming = false;
  const on = process.env.BENCH_DELIVERY !== 'off';

  async function attempt(claimed: Claimed): Promise<void> {
    const started = new Date();
    const answer = await post(`${miniappUrl}/complete-order`, claimed.body, {
      'x-minibridge-event-id': claimed.event_id,
      'x-minibridge-delivery-attempt': String(claimed.attempts_made + 1),
    }).catch(() => ({ status: 0, text: '' }));
    const ok = answer.status === 200 && (JSON.parse(answer.text) as { code?: string }).code !== undefined;
    await recordAttempt({
      delivery_id: claimed.delivery_id,
      lease_id: claimed.lease_id,
      ok,
      started_at: started.toISOString(),
      duration_ms: Date.now() - started.getTime(),
      http_status: answer.status || null,
    });
  }

  function startAttempts(): void {
    while (inFlight < maxInFlight && leased.length > 0) {
      inFlight++;
      void attempt(leased.shift()!)
        .catch(() => undefined)
        .finally(() => {
          inFlight--;
          startAttempts();
          pump();
        });
    }
  }

  function pump(): void {
    if (!on) return;
    if (claiming) {
      wokenWhileClaiming = true;
      return;
    }
    const held = leased.length + inFlight;
    if (held > maxInFlight) return;
    claiming = true;
    wokenWhileClaiming = false;
    db.query<Claimed>(claimStatement, [2 * maxInFlight - held])
      .then((rows) => {
        leased.push(...rows);
        startAttempts();
        claiming = false;
        if (rows.length > 0 || wokenWhileClaiming) pump();
      })
      .catch(() => {
        claiming = false;
      });
  }
  if (on) setInterval(pump, 250).unref();
  return { wake: pump };
})();

function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const upstream = request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        answer.on('error', reject);
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}

interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}
const refused = (status: number, code: string): Answer => ({ status, body: JSON.stringify({ error_code: code }) });

async function createOrderPayment(text: string): Promise<Answer> {
  const e1 = JSON.parse(text) as {
    app_id: string;
    client_id: string;
    order: { miniapp_order_id: string; amount: string; currency: string };
  };
  const key = `order:${e1.app_id}:${e1.client_id}:${e1.order.miniapp_order_id}`;
  const reservationId = randomUUID();
  const orderJson = JSON.stringify(e1.order);
  // The key stores the request's SHA-256, as the platform's does.
  const requestHash = hash('sha256', `${e1.client_id}\n${text}`, 'hex');
  if (!(await reserve({ key, hash: requestHash, reservation_id: reservationId }))) return refused(409, 'IDEMPOTENCY_CONFLICT');
  const created = JSON.parse((await post(`${hostappUrl}/create-order-payment`, text)).text) as { order_payment_id: string };
  const ok = await record({
    key,
    reservation_id: reservationId,
    order_payment_id: created.order_payment_id,
    app_id: e1.app_id,
    client_id: e1.client_id,
    miniapp_order_id: e1.order.miniapp_order_id,
    amount_text: String(e1.order.amount),
    currency: e1.order.currency,
    order_json: orderJson,
  });
  return ok
    ? { status: 200, body: JSON.stringify({ order_payment_id: created.order_payment_id }) }
    : refused(502, 'HOSTAPP_INVALID_RESPONSE');
}

async function changeStatus(ref: PaymentRef, paymentStatus: string, source: 'E4' | 'E5'): Promise<boolean> {
  const applied = await transition({
    ...ref,
    payment_status: paymentStatus,
    source,
    delivery_id: randomUUID(),
    event_id: `evt_${randomUUID()}`,
  });
  if (applied) delivery.wake();
  return applied;
}

async function getPaymentStatus(text: string): Promise<Answer> {
  const { order_payment_id, app_id, client_id } = JSON.parse(text) as PaymentRef;
  const ref = { order_payment_id, app_id, client_id };
  let status = await readStatus({ ...ref, i: nextRead++ });
  if (status === undefined) return refused(404, 'ORDER_NOT_FOUND');
  if (status === 'in_process') {
    const report = JSON.parse((await post(`${hostappUrl}/get-payment-status`, JSON.stringify(ref))).text) as { payment_status: string };
    if (report.payment_status !== 'in_process' && (await changeStatus(ref, report.payment_status, 'E4'))) status = report.payment_status;
  }
  return { status: 200, body: JSON.stringify({ ...ref, payment_status: status }) };
}

async function completeOrder(text: string): Promise<Answer> {
  const { order_payment_id, app_id, client_id, payment_status } = JSON.parse(text) as PaymentRef & { payment_status: string };
  if (!(await changeStatus({ order_payment_id, app_id, client_id }, payment_status, 'E5'))) return refused(409, 'PAYMENT_STATUS_CONFLICT');
  return { status: 200, body: '{"code":"SUCCESS"}' };
}

async function forwardEvent(text: string, direction: 'hostapp_to_miniapp' | 'miniapp_to_hostapp'): Promise<Answer> {
  const sent = JSON.parse(text) as { app_id: string; client_id: string; event_type: string; external_event_id?: string; payload: unknown };
  const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
  const recipient = direction === 'hostapp_to_miniapp' ? miniappUrl : hostappUrl;
  const started = Date.now();
  const event = { app_id: sent.app_id, client_id: sent.client_id, event_type: sent.event_type, payload: sent.payload };
  const answer = await post(`${recipient}/events`, JSON.stringify(event), { 'x-minibridge-event-id': eventId });
  await logEvent({
    event_id: eventId,
    direction,
    app_id: sent.app_id,
    client_id: sent.client_id,
    event_type: sent.event_type,
    external_event_id: sent.external_event_id ?? null,
    payload: JSON.stringify(sent.payload),
    outcome: answer.status === 200 ? 'delivered' : 'failed',
    receiver_http_status: answer.status,
    receiver_response: answer.status === 200 ? answer.text : null,
    duration_ms: Date.now() - started,
  });
  if (answer.status !== 200) return refused(502, 'EVENT_DELIVERY_FAILED');
  return { status: 200, body: answer.text, headers: { 'x-minibridge-event-id': eventId } };
}

const routes: Record<string, (text: string) => Promise<Answer>> = {
  '/api/v1/orders/create-order-payment/': createOrderPayment,
  '/api/v1/orders/get-payment-status/': getPaymentStatus,
  '/api/v1/orders/complete-order/': completeOrder,
  '/api/v1/events/hostapp/': (text) => forwardEvent(text, 'hostapp_to_miniapp'),
  '/api/v1/events/miniapp/': (text) => forwardEvent(text, 'miniapp_to_hostapp'),
};

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const route = routes[req.url ?? ''];
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    route(Buffer.concat(chunks).toString()).then(
      (answer) => res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body),
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
