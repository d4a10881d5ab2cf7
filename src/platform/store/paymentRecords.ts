import type { components } from '../../../generated/types/platform.js';
import type { Db } from './db.js';
import { deliveryColumns, deliveryFromRow, InvalidCursorError } from './outbox.js';
import type { OrderPaymentRef } from './orderPayments.js';
import { storableInstant } from './time.js';

type Schemas = components['schemas'];
type DashboardPayment = Schemas['DashboardPayment'];

/** Which payments a list shows; `appId`/`clientId` scope it to one partner (or, for operators, filter it). */
export interface PaymentQuery {
  appId?: string;
  clientId?: string;
  status?: Schemas['PaymentStatus'];
  stuck?: boolean;
  createdFrom?: Date;
  createdTo?: Date;
  miniappOrderId?: string;
  orderPaymentId?: string;
  limit: number;
  cursor?: string;
}

/** The dashboard's reading of order payments: lists by partner and one payment's timeline. */
export interface PaymentRecords {
  /** Newest first (created_at, then client_id and order_payment_id, descending), keyset pages. */
  list(query: PaymentQuery): Promise<Schemas['DashboardPaymentList']>;
  /** One payment with its history, its reconciliation asks and its deliveries; null when unknown. */
  get(ref: Pick<OrderPaymentRef, 'client_id' | 'order_payment_id'>): Promise<Schemas['DashboardPaymentDetail'] | null>;
}

interface PaymentRow {
  order_payment_id: string;
  app_id: string;
  client_id: string;
  miniapp_order_id: string | null;
  hostapp_user_id: string | null;
  amount_text: string;
  currency: string;
  payment_status: Schemas['PaymentStatus'];
  payment_fail_reason: string | null;
  settled_by: Schemas['StatusSource'] | null;
  expires_at: Date | null;
  stuck_since: Date | null;
  reconcile_asks: number;
  reconcile_next_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const paymentColumns = `order_payment_id, app_id, client_id, miniapp_order_id, hostapp_user_id, amount_text, currency,
  payment_status, payment_fail_reason, settled_by, expires_at, stuck_since, reconcile_asks, reconcile_next_at,
  created_at, updated_at`;

function toPayment(row: PaymentRow): DashboardPayment {
  const inProcess = row.payment_status === 'in_process';
  return {
    order_payment_id: row.order_payment_id,
    app_id: row.app_id,
    client_id: row.client_id,
    ...(row.miniapp_order_id !== null && { miniapp_order_id: row.miniapp_order_id }),
    ...(row.hostapp_user_id !== null && { hostapp_user_id: row.hostapp_user_id }),
    amount: row.amount_text,
    currency: row.currency,
    payment_status: row.payment_status,
    ...(row.payment_fail_reason !== null && { payment_fail_reason: row.payment_fail_reason }),
    ...(!inProcess && row.settled_by !== null && { settled_by: row.settled_by }),
    ...(row.expires_at !== null && { expires_at: row.expires_at.toISOString() }),
    stuck: inProcess && row.stuck_since !== null,
    ...(inProcess && row.stuck_since !== null && { stuck_since: row.stuck_since.toISOString() }),
    reconcile_asks: row.reconcile_asks,
    ...(inProcess && row.reconcile_next_at !== null && { next_reconcile_at: row.reconcile_next_at.toISOString() }),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * A page's cursor: the last row's sort key (created_at, client_id, order_payment_id) as base64url
 * JSON, at most about 2,700 characters (ids are at most 250 characters each, up to 4 bytes in UTF-8; the contract allows 4096).
 * Anything else given as a cursor is refused (InvalidCursorError → 400), never sent to the database.
 */
function encodeCursor(row: PaymentRow): string {
  return Buffer.from(JSON.stringify([row.created_at.toISOString(), row.client_id, row.order_payment_id])).toString('base64url');
}

const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function decodeCursor(cursor: string): [Date, string, string] {
  if (cursor.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError(cursor);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError(cursor);
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    !parsed.every((part) => typeof part === 'string' && part.length > 0 && part.length <= 250 && !part.includes('\u0000')) ||
    !isoInstant.test(parsed[0])
  )
    throw new InvalidCursorError(cursor);
  const instant = storableInstant(parsed[0]);
  if (!instant) throw new InvalidCursorError(cursor);
  return [instant, parsed[1], parsed[2]];
}

export function createPaymentRecords(db: Db): PaymentRecords {
  return {
    async list(query) {
      const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
      const rows = await db.query<PaymentRow>(
        // created_at IS NOT NULL (always true) names the listing indexes' predicate (migration 096).
        `SELECT ${paymentColumns} FROM order_payments
         WHERE created_at IS NOT NULL AND ($1::text IS NULL OR app_id = $1) AND ($2::text IS NULL OR client_id = $2)
           AND ($3::text IS NULL OR payment_status = $3)
           AND ($4::boolean IS NULL OR (payment_status = 'in_process' AND stuck_since IS NOT NULL) = $4)
           AND ($5::timestamptz IS NULL OR created_at >= $5) AND ($6::timestamptz IS NULL OR created_at < $6)
           AND ($7::text IS NULL OR miniapp_order_id = $7) AND ($8::text IS NULL OR order_payment_id = $8)
           AND ($9::timestamptz IS NULL OR (created_at, client_id, order_payment_id) < ($9, $10::text, $11::text))
         ORDER BY created_at DESC, client_id DESC, order_payment_id DESC
         LIMIT $12`,
        [
          query.appId ?? null,
          query.clientId ?? null,
          query.status ?? null,
          query.stuck ?? null,
          query.createdFrom ?? null,
          query.createdTo ?? null,
          query.miniappOrderId ?? null,
          query.orderPaymentId ?? null,
          after?.[0] ?? null,
          after?.[1] ?? null,
          after?.[2] ?? null,
          query.limit + 1,
        ],
      );
      const page = rows.slice(0, query.limit);
      return { payments: page.map(toPayment), next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!) : null };
    },

    get(ref) {
      // One snapshot for the payment and its timeline.
      return db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const [row] = await tx.query<PaymentRow>(
          `SELECT ${paymentColumns} FROM order_payments WHERE client_id = $1 AND order_payment_id = $2`,
          [ref.client_id, ref.order_payment_id],
        );
        if (!row) return null;
        const history = await tx.query<{
          from_status: Schemas['PaymentStatus'] | null;
          to_status: Schemas['PaymentStatus'];
          source: Schemas['StatusSource'];
          reason: string | null;
          at: Date;
        }>(
          `SELECT from_status, to_status, source, reason, at FROM payment_status_history
           WHERE client_id = $1 AND order_payment_id = $2 ORDER BY id LIMIT 10`,
          [ref.client_id, ref.order_payment_id],
        );
        const asks = await tx.query<{
          asked_at: Date;
          duration_ms: number;
          outcome: Schemas['ReconcileAsk']['outcome'];
          payment_status: Schemas['PaymentStatus'] | null;
          detail: string | null;
        }>(
          `SELECT asked_at, duration_ms, outcome, payment_status, detail FROM reconcile_asks
           WHERE client_id = $1 AND order_payment_id = $2 ORDER BY id DESC LIMIT 200`,
          [ref.client_id, ref.order_payment_id],
        );
        const deliveries = await tx.query<Record<string, unknown>>(
          `SELECT ${deliveryColumns('deliveries')} FROM deliveries WHERE client_id = $1 AND order_payment_id = $2 ORDER BY deliveries.seq LIMIT 10`,
          [ref.client_id, ref.order_payment_id],
        );
        return {
          ...toPayment(row),
          history: history.map((entry) => ({
            from_status: entry.from_status,
            to_status: entry.to_status,
            source: entry.source,
            ...(entry.reason !== null && { reason: entry.reason }),
            at: entry.at.toISOString(),
          })),
          reconciliation: asks.reverse().map((ask) => ({
            asked_at: ask.asked_at.toISOString(),
            duration_ms: ask.duration_ms,
            outcome: ask.outcome,
            ...(ask.payment_status !== null && { payment_status: ask.payment_status }),
            ...(ask.detail !== null && { detail: ask.detail }),
          })),
          deliveries: deliveries.map((delivery) => deliveryFromRow(delivery, '')),
        };
      });
    },
  };
}
