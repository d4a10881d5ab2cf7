import { v7 as timeOrderedUuid } from 'uuid';
import type { components } from '../../../generated/types/platform.js';
import { decideTransition } from './paymentTransitions.js';
import { batched, e1WriteBatching, inRounds } from './batch.js';
import { batchingFor, type Db } from './db.js';
import type { Reservation } from './idempotency.js';
import { pendingDelivery } from './outbox.js';
import type { PinnedIds } from './pinnedIds.js';
import { redactedOrder } from './redactedOrder.js';
import type { Clock } from './time.js';

type PaymentStatus = components['schemas']['PaymentStatus'];
type Delivery = components['schemas']['Delivery'];

/**
 * Where a status change came from: E1 creation, E5 report, E4 answer to a status query an E2
 * caused, or E4 answer to the platform's own query (reconciliation, ADR 0039).
 */
export type StatusSource = components['schemas']['StatusSource'];

export interface NewOrderPayment {
  order_payment_id: string;
  app_id: string;
  client_id: string;
  miniapp_order_id: string | null;
  hostapp_user_id: string | null;
  /** The Decimal exactly as E1 sent it, e.g. "12.30". */
  amount: string;
  currency: string;
  /** The E1 order as exact JSON text (a JSON object: the batch sends it as a member of its JSON rows). */
  order_json: string;
  /** JSON text, as received. */
  custom_attributes: string | null;
  /** When the payment expires (ADR 0039): told to the host app on E3. */
  expires_at: Date;
  /** When the platform first asks the host app about it if no E5 came (reconciliation). */
  reconcile_at: Date;
}

/**
 * An order payment as the store reads it back. The order's text is not read back: it is written
 * once by E1 and compared in SQL (an E1 retried with the same order), and no reader needs it, so
 * E2's and E5's reads, and the rows a transition returns, do not carry it.
 */
export interface OrderPayment extends Omit<NewOrderPayment, 'expires_at' | 'reconcile_at' | 'order_json'> {
  payment_status: PaymentStatus;
  payment_fail_reason: string | null;
  /** Null for payments created before expiry existed. */
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface StatusChange {
  from_status: PaymentStatus | null;
  to_status: PaymentStatus;
  source: StatusSource;
  reason: string | null;
  at: string;
}

/** Identifies an order payment the way E2 and E5 name it. */
export interface OrderPaymentRef {
  order_payment_id: string;
  app_id: string;
  client_id: string;
}

export interface TransitionRequest extends OrderPaymentRef {
  payment_status: PaymentStatus;
  payment_fail_reason: string | null;
  /** JSON text; when null the recorded attributes stay. */
  custom_attributes: string | null;
  source: Exclude<StatusSource, 'E1'>;
}

export type TransitionResult =
  | { outcome: 'not_found' }
  | { outcome: 'applied'; orderPayment: OrderPayment; delivery: Delivery }
  | { outcome: 'unchanged' | 'conflict'; orderPayment: OrderPayment };

export type CreateResult =
  /**
   * created: recorded, and the reservation's keys marked done. already_exists: the host app
   * returned an order_payment_id already on record for this same order (a retried E3); the keys
   * are marked done with it.
   */
  | { outcome: 'created' | 'already_exists'; orderPayment: OrderPayment }
  /**
   * bound_elsewhere: the order_payment_id is on record for another order (another miniapp,
   * miniapp_order_id or body, ADR 0016). Nothing was written: the keys stay pending for the
   * caller to release.
   */
  | { outcome: 'bound_elsewhere'; orderPayment: OrderPayment };

export interface OrderPayments {
  /**
   * Creates the order payment in in_process with its first history entry and, in the same
   * transaction, marks the reservation's idempotency keys done with its order_payment_id. Keys
   * are marked only when the order payment on record is this order (see CreateResult).
   */
  create(payment: NewOrderPayment, reservation: Reservation | null): Promise<CreateResult>;
  get(ref: OrderPaymentRef): Promise<OrderPayment | null>;
  history(ref: OrderPaymentRef): Promise<StatusChange[]>;
  /**
   * Moves the payment to the requested status when the state machine allows it; an applied
   * change commits together with its history entry and its E6 outbox delivery, whose body
   * `completion` writes (the domain's, from the payment as it will be).
   */
  transition(request: TransitionRequest, completion: (next: OrderPayment) => string): Promise<TransitionResult>;
}

interface OrderPaymentRow extends Omit<OrderPayment, 'created_at' | 'updated_at' | 'expires_at'> {
  created_at: Date;
  updated_at: Date;
  expires_at: Date | null;
}

/** The select list of an order payment read from `source` (a table or CTE name). */
function columns(source: string): string {
  return `${source}.order_payment_id, ${source}.app_id, ${source}.client_id, ${source}.miniapp_order_id,
    ${source}.hostapp_user_id, ${source}.amount_text AS amount, ${source}.currency,
    ${source}.payment_status, ${source}.payment_fail_reason, ${source}.custom_attributes, ${source}.expires_at,
    ${source}.created_at, ${source}.updated_at`;
}

function toOrderPayment(row: OrderPaymentRow): OrderPayment {
  return {
    order_payment_id: row.order_payment_id,
    app_id: row.app_id,
    client_id: row.client_id,
    miniapp_order_id: row.miniapp_order_id,
    hostapp_user_id: row.hostapp_user_id,
    amount: row.amount,
    currency: row.currency,
    payment_status: row.payment_status,
    payment_fail_reason: row.payment_fail_reason,
    custom_attributes: row.custom_attributes,
    expires_at: row.expires_at === null ? null : row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * The order payment whose primary key is `ref`'s (client_id, order_payment_id), as a LATERAL
 * subquery: a seek on the primary key. The row comparison and its order are the primary key's
 * alone, so any plan of it, the one kept from empty tables included, is one descent of
 * order_payments_pkey per request (ADR 0013). Written as two equalities instead, a plan made on
 * small tables hashes the whole table, or ties the primary key with the indexes that lead with
 * client_id or app_id and, picking one of those, reads every payment of that host app or miniapp.
 * The caller still checks that the row found is that key: the first row at or after it may be
 * another payment's. `select`: the columns taken (ctid to update the row found).
 */
export function seekPayment(ref: string, select = '*'): string {
  return `LATERAL (SELECT ${select} FROM order_payments k
      WHERE (k.client_id, k.order_payment_id) >= (${ref}.client_id, ${ref}.order_payment_id)
      ORDER BY k.client_id, k.order_payment_id LIMIT 1)`;
}

/**
 * Order payments read together (E2, and every transition's first step): one statement for every
 * read queued while the previous ran. A payment is found only within its app_id and client_id.
 */
const readStatement = {
  name: 'store.orderPayments.read',
  text: `SELECT r.idx, ${columns('p')}
    FROM json_to_recordset($1::json) AS r (idx int, client_id text, order_payment_id text, app_id text)
    CROSS JOIN ${seekPayment('r')} AS p
    WHERE p.client_id = r.client_id AND p.order_payment_id = r.order_payment_id AND p.app_id = r.app_id`,
};

/**
 * The one record statement of E1 (ADR 0007, 0016, 0021), for every request of a batch: each order
 * payment is inserted in process with its first history entry; one whose order_payment_id is
 * already on record comes back instead, judged against the request (`same_order`: the same
 * miniapp, order reference, user, amount, currency and order text; the same id for another order
 * is a host app fault). The keys of the requests that recorded their order (inserted, or on
 * record as this same order) are marked done with the order_payment_id: the one place that rule
 * is written. A payment on record as this order keeps the later expiry a retried E3 told the host
 * app (ADR 0039), and that expiry's schedule: it is not stuck before the new at-expiry ask, and
 * it is asked no later than a new payment would be (a stuck payment's slow schedule, or none past
 * its horizon, would skip that ask). A row committed after the statement's snapshot is neither inserted (it
 * conflicts) nor seen: its request is sent again in the next round. An order_payment_id appears
 * in one request per statement; the rows come back named by it, not by position.
 *
 * A payment whose personal details were redacted (their period, or a user's erasure, ADR 0041)
 * is compared by what it keeps: the retry's order reduced to the same financial members ($4), and
 * no user id; compared whole, every retry of it was judged another order.
 *
 * A batch of new payments (the common case) does what a plain batch insert does and no more
 * (ADR 0013, `e1-record-statement-counts.md`): the rows are read from $1 once, straight into the
 * insert; its history entries and keys are written from what the insert returned. The branches of
 * an id already on record are gated on the insert having skipped a row (fewer rows returned than
 * the $3 requests sent): until then `recorded` reads neither $1 again nor order_payments, and the
 * keys and the expiry join only its (empty) rows. Every table is reached by its key whatever plan
 * the named statement keeps: the insert and its conflicts through the primary key (ON CONFLICT),
 * the keys by `key`, the rows on record by the primary key. `recorded` leaves out the rows the
 * insert wrote (invisible to the statement's snapshot anyway): besides saving their probes when a
 * batch mixes both, that keeps the planner's estimate of the branch small, so the generic plan
 * stays no dearer than a custom one and the plan cache keeps it.
 */
const recordStatement = {
  name: 'store.orderPayments.record',
  text: `WITH inserted AS (
      INSERT INTO order_payments (order_payment_id, app_id, client_id, miniapp_order_id, hostapp_user_id,
        amount_text, amount, currency, order_json, payment_status, custom_attributes, created_at, updated_at,
        expires_at, reconcile_next_at)
      SELECT order_payment_id, app_id, client_id, miniapp_order_id, hostapp_user_id, amount_text, amount_text::numeric,
        currency, order_json, 'in_process', custom_attributes, at, at, expires_at, reconcile_at
      FROM json_to_recordset($1::json) AS r (order_payment_id text, app_id text, client_id text, miniapp_order_id text,
        hostapp_user_id text, amount_text text, currency text, order_json text, custom_attributes text, at timestamptz,
        expires_at timestamptz, reconcile_at timestamptz)
      ON CONFLICT (client_id, order_payment_id) DO NOTHING
      RETURNING client_id, order_payment_id, payment_status, created_at
    ),
    history AS (
      INSERT INTO payment_status_history (client_id, order_payment_id, from_status, to_status, source, reason, at)
      SELECT client_id, order_payment_id, NULL, payment_status, 'E1', NULL, created_at FROM inserted
    ),
    recorded AS (
      SELECT p.*, (p.app_id = r.app_id AND p.miniapp_order_id IS NOT DISTINCT FROM r.miniapp_order_id
          AND p.amount_text = r.amount_text AND p.currency = r.currency
          AND CASE WHEN p.personal_redacted_at IS NULL AND p.erased_user_digest IS NULL
            THEN p.hostapp_user_id IS NOT DISTINCT FROM r.hostapp_user_id AND p.order_json = r.order_json
            ELSE p.order_json = ${redactedOrder('r.order_json', '$4')} END) AS same_order,
        r.expires_at AS requested_expiry, r.reconcile_at AS requested_reconcile_at
      FROM json_to_recordset($1::json) AS r (order_payment_id text, app_id text, client_id text, miniapp_order_id text,
        hostapp_user_id text, amount_text text, currency text, order_json text, expires_at timestamptz,
        reconcile_at timestamptz)
      JOIN order_payments p ON p.client_id = r.client_id AND p.order_payment_id = r.order_payment_id
      WHERE (SELECT count(*) FROM inserted) < $3::int
        AND NOT EXISTS (SELECT 1 FROM inserted i WHERE i.client_id = r.client_id AND i.order_payment_id = r.order_payment_id)
    ),
    completed AS (
      UPDATE idempotency_keys k SET state = 'done', order_payment_id = owned.order_payment_id
      FROM json_to_recordset($2::json) AS owned (key text, reservation_id uuid, client_id text, order_payment_id text)
      JOIN (SELECT client_id, order_payment_id FROM inserted
        UNION ALL SELECT client_id, order_payment_id FROM recorded WHERE same_order) AS this_order
        ON this_order.client_id = owned.client_id AND this_order.order_payment_id = owned.order_payment_id
      WHERE k.key = owned.key AND k.reservation_id = owned.reservation_id AND k.state = 'pending'
    ),
    extended AS (
      UPDATE order_payments p SET expires_at = r.requested_expiry, stuck_since = NULL,
        reconcile_next_at = LEAST(COALESCE(p.reconcile_next_at, r.requested_reconcile_at), r.requested_reconcile_at)
      FROM recorded r WHERE r.same_order AND p.payment_status = 'in_process'
        AND (p.expires_at IS NULL OR p.expires_at < r.requested_expiry)
        AND p.client_id = r.client_id AND p.order_payment_id = r.order_payment_id
    )
    SELECT 'created' AS outcome, client_id, order_payment_id, NULL AS app_id, NULL AS miniapp_order_id,
      NULL AS hostapp_user_id, NULL AS amount, NULL AS currency, NULL AS payment_status,
      NULL AS payment_fail_reason, NULL AS custom_attributes, NULL::timestamptz AS expires_at,
      NULL::timestamptz AS created_at, NULL::timestamptz AS updated_at
    FROM inserted
    UNION ALL
    SELECT CASE WHEN same_order THEN 'already_exists' ELSE 'bound_elsewhere' END, client_id, order_payment_id,
      app_id, miniapp_order_id, hostapp_user_id, amount_text, currency, payment_status,
      payment_fail_reason, custom_attributes, expires_at, created_at, updated_at
    FROM recorded`,
};

/** An order payment's identity within the platform (its primary key) as one string. */
function paymentId(payment: Pick<OrderPaymentRef, 'client_id' | 'order_payment_id'>): string {
  return `${payment.client_id}\u0000${payment.order_payment_id}`;
}

interface CreateRequest {
  payment: NewOrderPayment;
  reservation: Reservation | null;
  at: Date;
}

/**
 * Applied transitions together, each in full or not at all (a statement is atomic): the status
 * change, its history entry and its E6 delivery (due at once, its body as the domain wrote it,
 * passed verbatim as a JSON member). Each UPDATE is guarded by the state its decision and body
 * were computed from; a row another transition changed in between is left alone and its request
 * decided again. A payment appears in one request per statement. Each row is found by a seek on
 * the primary key (seekPayment), its guard judged on the row found, and updated by its ctid, the
 * only condition joining the UPDATE's table: so the kept plan never reads the table whole, or
 * hashes it on a column the requests share (ADR 0013). A row updated since the statement's
 * snapshot has a new ctid: it is left alone like one whose guard no longer matches, and decided
 * again on its new state. Only which requests were applied comes back: an applied row, its history
 * entry and its delivery hold exactly what was sent, stamped with the statement's time ($2).
 */
const applyStatement = {
  name: 'store.orderPayments.apply',
  text: `WITH requested AS (
      SELECT * FROM json_to_recordset($1::json) AS r (idx int, client_id text, order_payment_id text, app_id text,
        to_status text, fail_reason text, custom_attributes text, from_status text, from_custom text, source text,
        delivery_id uuid, event_id text, body text)
    ),
    found AS (
      SELECT r.*, k.row_id FROM requested r
      CROSS JOIN ${seekPayment('r', 'k.ctid AS row_id, k.client_id, k.order_payment_id, k.app_id, k.payment_status, k.custom_attributes')} AS k
      WHERE k.client_id = r.client_id AND k.order_payment_id = r.order_payment_id AND k.app_id = r.app_id
        AND k.payment_status = r.from_status AND k.custom_attributes IS NOT DISTINCT FROM r.from_custom
    ),
    updated AS (
      UPDATE order_payments p
      SET payment_status = r.to_status, payment_fail_reason = r.fail_reason,
          custom_attributes = COALESCE(r.custom_attributes, p.custom_attributes), updated_at = $2, settled_by = r.source
      FROM found r
      WHERE p.ctid = r.row_id
      RETURNING p.client_id, p.order_payment_id, p.app_id, p.payment_status, p.payment_fail_reason, p.updated_at,
        r.idx, r.from_status AS r_from, r.source AS r_source, r.delivery_id AS r_delivery, r.event_id AS r_event, r.body AS r_body
    ),
    history AS (
      INSERT INTO payment_status_history (client_id, order_payment_id, from_status, to_status, source, reason, at)
      SELECT client_id, order_payment_id, r_from, payment_status, r_source, payment_fail_reason, updated_at FROM updated
    ),
    delivery AS (
      INSERT INTO deliveries (delivery_id, event_id, client_id, order_payment_id, app_id, payment_status,
        body, status, next_attempt_at, horizon_started_at, created_at)
      SELECT r_delivery, r_event, client_id, order_payment_id, app_id, payment_status, r_body, 'pending', updated_at, updated_at, updated_at
      FROM updated
    )
    SELECT idx FROM updated`,
};

/**
 * Reads and applied transitions each go out one statement at a time, as E1's writes do
 * (e1WriteBatching, ADR 0051): everything that arrived while a statement ran goes in the next.
 * With two at once, each carried half as many requests, and the round trips, commits and backend
 * wake-ups per payment cost more than the wait they saved (bench/results/ab-transition-batching.md).
 */
const transitionBatching = { maxInFlight: 1, maxBatch: 256 };

interface ApplyRequest {
  request: TransitionRequest;
  current: OrderPaymentRow;
  /** The payment as the transition makes it: what the statement writes, so only its time comes back. */
  next: OrderPayment;
  /** The E6 body as JSON text (an object): it travels as a member's value, byte for byte. */
  body: string;
}

export function createOrderPayments(
  db: Db,
  clock: Clock,
  newEventId: () => string,
  financialMembers: readonly string[],
  pinnedDeliveryId?: PinnedIds['delivery'],
): OrderPayments {
  // As an array literal made once: a record statement binds it on every E1, where it is rarely read.
  const financialMembersLiteral = `{${financialMembers.map((member) => JSON.stringify(member)).join(',')}}`;
  const readBatched = batched<OrderPaymentRef, OrderPaymentRow | null>(
    async (refs) => {
      const rows = await db.query<OrderPaymentRow & { idx: number }>(readStatement, [
        JSON.stringify(
          refs.map((ref, idx) => ({ idx, client_id: ref.client_id, order_payment_id: ref.order_payment_id, app_id: ref.app_id })),
        ),
      ]);
      const found: Array<OrderPaymentRow | null> = refs.map(() => null);
      for (const row of rows) found[row.idx] = row;
      return found;
    },
    batchingFor(db, transitionBatching),
  );

  /** One round of transitions on distinct payments: the applied result, or null when the row changed since it was read. */
  async function applyRound(items: ApplyRequest[]): Promise<Array<TransitionResult | null>> {
    const at = clock();
    const sent = items.map(({ request }) => ({
      // Time-ordered (UUIDv7), not random: a new delivery's index entries (deliveries and
      // delivery_attempts) land on the indexes' newest pages instead of a random page of the
      // whole history, which on a large history was a page read per delivery (ADR 0041).
      delivery_id: pinnedDeliveryId?.(request) ?? timeOrderedUuid(),
      event_id: newEventId(),
    }));
    const rows = await db.query<{ idx: number }>(applyStatement, [
      `[${items
        .map(
          ({ request, current, body }, idx) =>
            `${JSON.stringify({
              idx,
              client_id: request.client_id,
              order_payment_id: request.order_payment_id,
              app_id: request.app_id,
              to_status: request.payment_status,
              fail_reason: request.payment_fail_reason,
              custom_attributes: request.custom_attributes,
              from_status: current.payment_status,
              from_custom: current.custom_attributes,
              source: request.source,
              delivery_id: sent[idx]!.delivery_id,
              event_id: sent[idx]!.event_id,
            }).slice(0, -1)},"body":${body}}`,
        )
        .join(',')}]`,
      at,
    ]);
    const results: Array<TransitionResult | null> = items.map(() => null);
    for (const { idx } of rows) {
      const { request, next } = items[idx]!;
      results[idx] = {
        outcome: 'applied',
        orderPayment: { ...next, updated_at: at.toISOString() },
        delivery: pendingDelivery(
          {
            ...sent[idx]!,
            order_payment_id: request.order_payment_id,
            app_id: request.app_id,
            client_id: request.client_id,
            payment_status: request.payment_status,
          },
          at,
        ),
      };
    }
    return results;
  }

  /**
   * A statement may touch a row once, so a batch's first request for each payment goes in it and
   * every later one is answered null (decide again) at once. Each was decided on a read taken
   * before the statement: once the first is applied its guard cannot match, and were it applied
   * in rounds of its own, a burst of requests for one payment would hold the one statement in
   * flight for a round each, with every other request of the batch waiting on them (ADR 0051).
   */
  async function applyFirstPerPayment(items: ApplyRequest[]): Promise<Array<TransitionResult | null>> {
    const seen = new Set<string>();
    const first: number[] = [];
    items.forEach(({ request }, index) => {
      const id = paymentId(request);
      if (seen.has(id)) return;
      seen.add(id);
      first.push(index);
    });
    if (first.length === items.length) return applyRound(items);
    const answers = await applyRound(first.map((index) => items[index]!));
    const results: Array<TransitionResult | null> = items.map(() => null);
    first.forEach((index, position) => (results[index] = answers[position]!));
    return results;
  }

  const applyBatched = batched<ApplyRequest, TransitionResult | null>(applyFirstPerPayment, batchingFor(db, transitionBatching));

  /** One round: requests whose order_payment_ids are distinct, in one statement; undefined for a request to send again. */
  async function recordRound(requests: CreateRequest[]): Promise<Array<CreateResult | undefined>> {
    // The rows travel as one JSON text (json_to_recordset), not as arrays the driver would escape
    // element by element. The order's JSON text goes in as the member's value itself, not as a
    // string of it: no escaping here and unescaping there, and a text column takes an object
    // member's text verbatim, byte for byte.
    const requested = `[${requests
      .map(
        ({ payment, at }) =>
          `${JSON.stringify({
            order_payment_id: payment.order_payment_id,
            app_id: payment.app_id,
            client_id: payment.client_id,
            miniapp_order_id: payment.miniapp_order_id,
            hostapp_user_id: payment.hostapp_user_id,
            amount_text: payment.amount,
            currency: payment.currency,
            custom_attributes: payment.custom_attributes,
            at: at.toISOString(),
            expires_at: payment.expires_at.toISOString(),
            reconcile_at: payment.reconcile_at.toISOString(),
          }).slice(0, -1)},"order_json":${payment.order_json}}`,
      )
      .join(',')}]`;
    const owned = requests.flatMap(({ payment, reservation }) =>
      (reservation?.keys ?? []).map((key) => ({
        key,
        reservation_id: reservation!.reservation_id,
        client_id: payment.client_id,
        order_payment_id: payment.order_payment_id,
      })),
    );
    const rows = await db.query<OrderPaymentRow & { outcome: CreateResult['outcome'] }>(recordStatement, [
      requested,
      JSON.stringify(owned),
      requests.length,
      financialMembersLiteral,
    ]);
    // A round's ids are distinct (recordAll), so a row names its request by its id.
    const position = new Map(requests.map(({ payment }, index) => [paymentId(payment), index]));
    const results: Array<CreateResult | undefined> = requests.map(() => undefined);
    for (const row of rows) {
      const index = position.get(paymentId(row))!;
      const { payment, at } = requests[index]!;
      // A created row holds exactly what was sent: only which ones were inserted comes back.
      results[index] =
        row.outcome === 'created'
          ? {
              outcome: 'created',
              orderPayment: {
                order_payment_id: payment.order_payment_id,
                app_id: payment.app_id,
                client_id: payment.client_id,
                miniapp_order_id: payment.miniapp_order_id,
                hostapp_user_id: payment.hostapp_user_id,
                amount: payment.amount,
                currency: payment.currency,
                payment_status: 'in_process',
                payment_fail_reason: null,
                custom_attributes: payment.custom_attributes,
                expires_at: payment.expires_at.toISOString(),
                created_at: at.toISOString(),
                updated_at: at.toISOString(),
              },
            }
          : { outcome: row.outcome, orderPayment: toOrderPayment(row) };
    }
    return results;
  }

  /** Rounds of requests with distinct order_payment_ids until each is decided (usually one round). */
  const recordAll = (requests: CreateRequest[]) => inRounds(requests, ({ payment }) => [paymentId(payment)], recordRound);

  // On PGlite one statement at a time, so that requests queue and share it (ADR 0032).
  const recordBatched = batched(recordAll, batchingFor(db, e1WriteBatching));

  return {
    create(payment, reservation) {
      return recordBatched({ payment, reservation, at: clock() });
    },

    async get(ref) {
      const row = await readBatched(ref);
      return row ? toOrderPayment(row) : null;
    },

    async history(ref) {
      const rows = await db.query<Omit<StatusChange, 'at'> & { at: Date }>(
        `SELECT h.from_status, h.to_status, h.source, h.reason, h.at
         FROM payment_status_history h
         JOIN order_payments p USING (client_id, order_payment_id)
         WHERE h.client_id = $1 AND h.order_payment_id = $2 AND p.app_id = $3
         ORDER BY h.id`,
        [ref.client_id, ref.order_payment_id, ref.app_id],
      );
      return rows.map((row) => ({ ...row, at: row.at.toISOString() }));
    },

    // Read, decide in TypeScript (the one state machine), then write with a guarded statement:
    // two statements (each shared by every request of its batch) and no lock held between them.
    // A guard that no longer matches means another transition won the race; deciding again on
    // the new state gives the answer a lock would have.
    async transition(request, completion) {
      for (;;) {
        const current = await readBatched(request);
        if (!current) return { outcome: 'not_found' };
        const decision = decideTransition(current.payment_status, request.payment_status);
        if (decision !== 'apply') return { outcome: decision, orderPayment: toOrderPayment(current) };
        const next: OrderPayment = {
          ...toOrderPayment(current),
          payment_status: request.payment_status,
          payment_fail_reason: request.payment_fail_reason,
          custom_attributes: request.custom_attributes ?? current.custom_attributes,
        };
        const applied = await applyBatched({ request, current, next, body: completion(next) });
        if (applied) return applied;
      }
    },
  };
}
