import type { components } from '../../../generated/types/platform.js';
import type { Db } from './db.js';
import { InvalidCursorError } from './outbox.js';
import type { Clock } from './time.js';

type Schemas = components['schemas'];
type StatementLine = Schemas['StatementLine'];
type StatementTotal = Schemas['StatementTotal'];

const DAY_MS = 86_400_000;
/** How long one statement closing a day may take: minutes for millions of settlements a day. */
const CLOSE_DAY_STATEMENT_MS = 10 * 60_000;

/** Whose statement: a miniapp's payments (`app_id`) or a host app's (`client_id`). */
export interface StatementOwner {
  kind: 'miniapp' | 'hostapp';
  id: string;
}

export interface StatementRule {
  /** A day closes this long after it ends. */
  closesAfterMs: number;
  /** A settlement stamped at most this many days before the closing day is listed on it as an adjustment. */
  lookBackDays: number;
}

/** Where a page of totals ends: its last total's currency and status. */
export type TotalKey = Pick<StatementTotal, 'currency' | 'payment_status'>;

export interface LinesPage {
  lines: StatementLine[];
  next_cursor: string | null;
}

/**
 * Daily statements (ADR 0041). A day is closed once, in order, by whichever instance takes the one
 * progress row first (FOR UPDATE SKIP LOCKED: the others skip, nobody waits); its lines are
 * written then and never change. Reads only ever see closed days.
 */
export interface Statements {
  /**
   * Closes the next day if it is due; true when this call closed one. The first close (nothing
   * closed yet) closes every due day before the first settlement on record at once, empty.
   */
  closeNextDay(): Promise<boolean>;
  /**
   * When the day closed, or null until it is closed: by the progress row, never by the clock alone
   * (ADR 0041). A day the first close found before the first settlement (none listed, nor ever
   * will be: a late settlement lands on the next day that closes) closed empty, at the rule's time.
   */
  closedAt(day: string): Promise<Date | null>;
  /**
   * The whole day's totals for one owner, per currency and status, exact (NUMERIC sums written as
   * text), ordered by currency then status: at most `limit`, after `after` (the last of the
   * previous page). A day may hold any number: a currency is any text an E1 sends.
   */
  totals(owner: StatementOwner, day: string, limit: number, after?: TotalKey): Promise<StatementTotal[]>;
  /** Lines ordered by client_id then order_payment_id, after `cursor`. */
  lines(owner: StatementOwner, day: string, limit: number, cursor?: string): Promise<LinesPage>;
}

interface LineRow {
  client_id: string;
  order_payment_id: string;
  app_id: string;
  miniapp_order_id: string | null;
  amount_text: string;
  currency: string;
  payment_status: StatementLine['payment_status'];
  payment_fail_reason: string | null;
  settled_by: StatementLine['settled_by'] | null;
  created_at: Date;
  settled_at: Date;
  adjustment: boolean;
}

/** The UTC date of an instant, `YYYY-MM-DD`. */
export function utcDay(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

function dayStart(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

function encodeCursor(row: LineRow): string {
  return Buffer.from(JSON.stringify([row.client_id, row.order_payment_id])).toString('base64url');
}

/** A lines cursor's key, or InvalidCursorError for anything this store did not make. */
export function decodeCursor(cursor: string): [string, string] {
  if (cursor.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError(cursor);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError(cursor);
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !parsed.every((part) => typeof part === 'string' && part.length > 0 && part.length <= 250 && !part.includes('\u0000'))
  )
    throw new InvalidCursorError(cursor);
  return [parsed[0], parsed[1]];
}

function toLine(row: LineRow): StatementLine {
  return {
    client_id: row.client_id,
    order_payment_id: row.order_payment_id,
    app_id: row.app_id,
    ...(row.miniapp_order_id !== null && { miniapp_order_id: row.miniapp_order_id }),
    amount: row.amount_text,
    currency: row.currency,
    payment_status: row.payment_status,
    ...(row.payment_fail_reason !== null && { payment_fail_reason: row.payment_fail_reason }),
    ...(row.settled_by !== null && { settled_by: row.settled_by }),
    created_at: row.created_at.toISOString(),
    settled_at: row.settled_at.toISOString(),
    adjustment: row.adjustment,
  };
}

const ownerColumn = (owner: StatementOwner) => (owner.kind === 'miniapp' ? 'app_id' : 'client_id');

export function createStatements(db: Db, clock: Clock, rule: StatementRule): Statements {
  return {
    closeNextDay() {
      return db.transaction(
        async (tx) => {
          const [progress] = await tx.query<{ closed_through: string | null }>(
            `SELECT to_char(closed_through, 'YYYY-MM-DD') AS closed_through FROM statement_progress FOR UPDATE SKIP LOCKED`,
          );
          // Another instance is closing a day right now, or the row is missing (an emptied table):
          // an insert that wins holds it like the lock would.
          if (!progress) {
            const [made] = await tx.query<{ singleton: boolean }>(
              'INSERT INTO statement_progress (singleton, closed_through) VALUES (TRUE, NULL) ON CONFLICT DO NOTHING RETURNING singleton',
            );
            if (!made) return false;
          }
          const now = clock();
          const lastCloseable = utcDay(new Date(now.getTime() - rule.closesAfterMs - DAY_MS));
          let closedThrough = progress?.closed_through ?? null;
          if (closedThrough === null) {
            // The first close: every day before the first settlement on record, up to the last one
            // due, closes empty at once (nothing was settled up to its end). From then on it is a
            // closed day like any other: a settlement stamped in it later (a clock behind) is an
            // adjustment on the next day to close, and it is never written again.
            const [first] = await tx.query<{ day: string | null }>(
              `SELECT to_char(min(at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM payment_status_history WHERE to_status <> 'in_process'`,
            );
            const beforeFirst = first?.day ? utcDay(new Date(dayStart(first.day).getTime() - DAY_MS)) : lastCloseable;
            const emptyThrough = beforeFirst < lastCloseable ? beforeFirst : lastCloseable;
            await tx.query('UPDATE statement_progress SET closed_through = $1::date', [emptyThrough]);
            closedThrough = emptyThrough;
            if (emptyThrough === lastCloseable) return true;
          }
          const day = utcDay(new Date(dayStart(closedThrough).getTime() + DAY_MS));
          if (day > lastCloseable) return false;
          const start = dayStart(day);
          await tx.query('INSERT INTO statement_days (day, closed_at) VALUES ($1::date, $2)', [day, now]);
          // Each settled payment once, ever: its first terminal transition, stamped in this day or
          // (a clock behind, or an instance that wrote after the close) in an earlier closed day
          // within the look-back, then listed as an adjustment.
          await tx.query(
            `INSERT INTO statement_lines (day, client_id, order_payment_id, app_id, miniapp_order_id, amount_text, currency,
             payment_status, payment_fail_reason, settled_by, created_at, settled_at, adjustment)
           SELECT $1::date, p.client_id, p.order_payment_id, p.app_id, p.miniapp_order_id, p.amount_text, p.currency,
             t.to_status, p.payment_fail_reason, p.settled_by, p.created_at, t.at, t.at < $2
           FROM (
             SELECT DISTINCT ON (h.client_id, h.order_payment_id) h.client_id, h.order_payment_id, h.to_status, h.at
             FROM payment_status_history h
             WHERE h.to_status <> 'in_process' AND h.at >= $3 AND h.at < $4
               AND NOT EXISTS (SELECT 1 FROM statement_lines s WHERE s.client_id = h.client_id AND s.order_payment_id = h.order_payment_id)
             ORDER BY h.client_id, h.order_payment_id, h.id
           ) t JOIN order_payments p ON p.client_id = t.client_id AND p.order_payment_id = t.order_payment_id`,
            [day, start, new Date(start.getTime() - rule.lookBackDays * DAY_MS), new Date(start.getTime() + DAY_MS)],
          );
          await tx.query('UPDATE statement_progress SET closed_through = $1::date', [day]);
          return true;
        },
        // A day's lines are written in one statement, off every request's path: a busy day takes
        // longer than a request's statement time-out (ADR 0041).
        { statementMs: CLOSE_DAY_STATEMENT_MS },
      );
    },

    async closedAt(day) {
      // Closed only once the progress row says so, never by the clock alone: a day answered as
      // closed and empty must stay so when a settlement stamped in it by a clock behind arrives
      // later (it is then an adjustment on the next day to close). A day up to closed_through
      // without a row of its own was before the first settlement, closed empty by the first close;
      // it says it closed when the rule closed it. Both are read in one statement, one snapshot: read
      // one after the other, a close committed in between (another instance's) made the day's own
      // row missing and the progress row past it, so the day was answered with the rule's time and
      // then, on every later read, with the time it closed.
      const [row] = await db.query<{ closed_at: Date | null; closed: boolean | null }>(
        `SELECT (SELECT closed_at FROM statement_days WHERE day = $1::date) AS closed_at,
           (SELECT closed_through >= $1::date FROM statement_progress) AS closed`,
        [day],
      );
      if (row?.closed_at) return row.closed_at;
      return row?.closed ? new Date(dayStart(day).getTime() + DAY_MS + rule.closesAfterMs) : null;
    },

    async totals(owner, day, limit, after) {
      const rows = await db.query<{ currency: string; payment_status: StatementTotal['payment_status']; count: string; amount: string }>(
        `SELECT currency, payment_status, count(*)::text AS count, sum(amount_text::numeric)::text AS amount
         FROM statement_lines WHERE day = $1::date AND ${ownerColumn(owner)} = $2
           AND ($3::text IS NULL OR (currency, payment_status) > ($3, $4::text))
         GROUP BY currency, payment_status
         ORDER BY currency, payment_status LIMIT $5`,
        [day, owner.id, after?.currency ?? null, after?.payment_status ?? null, limit],
      );
      return rows.map((row) => ({
        currency: row.currency,
        payment_status: row.payment_status,
        count: Number(row.count),
        amount: row.amount,
      }));
    },

    async lines(owner, day, limit, cursor) {
      const after = cursor === undefined ? null : decodeCursor(cursor);
      const rows = await db.query<LineRow>(
        `SELECT client_id, order_payment_id, app_id, miniapp_order_id, amount_text, currency, payment_status,
           payment_fail_reason, settled_by, created_at, settled_at, adjustment
         FROM statement_lines
         WHERE day = $1::date AND ${ownerColumn(owner)} = $2
           AND ($3::text IS NULL OR (client_id, order_payment_id) > ($3, $4::text))
         ORDER BY client_id, order_payment_id LIMIT $5`,
        [day, owner.id, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
      );
      const page = rows.slice(0, limit);
      return { lines: page.map(toLine), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null };
    },
  };
}
