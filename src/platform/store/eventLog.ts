import { batched } from './batch.js';
import { batchingFor, type Db } from './db.js';
import type { Clock } from './time.js';

export type EventDirection = 'hostapp_to_miniapp' | 'miniapp_to_hostapp';
export type EventOutcome = 'delivered' | 'failed' | 'refused';

/** One event the bridge handled (D9). Fields a refused request never provided are null. */
export interface EventLogEntry {
  event_id: string;
  direction: EventDirection;
  app_id: string | null;
  client_id: string | null;
  event_type: string | null;
  external_event_id: string | null;
  /** The event's payload as JSON text. */
  payload: string | null;
  outcome: EventOutcome;
  error_code: string | null;
  receiver_http_status: number | null;
  /** The receiver's answer as JSON text. */
  receiver_response: string | null;
  duration_ms: number | null;
  /** The host app users the event names (`hostapp_user_id` members of its payload, at any depth), for erasure (ADR 0041). */
  names_users?: readonly string[] | null;
  /** The payments the event names (`order_payment_id` members of its payload, at any depth), for erasure (ADR 0041). */
  names_payments?: readonly string[] | null;
}

export interface LoggedEvent extends EventLogEntry {
  at: string;
}

export interface EventLog {
  /** Appends an entry stamped with the current time. */
  record(entry: EventLogEntry): Promise<void>;
  /** Every entry for an event ID, oldest first (a resent event has several). */
  findByEventId(eventId: string): Promise<LoggedEvent[]>;
}

const fields = [
  'event_id',
  'direction',
  'app_id',
  'client_id',
  'event_type',
  'external_event_id',
  'payload',
  'outcome',
  'error_code',
  'receiver_http_status',
  'receiver_response',
  'duration_ms',
] as const satisfies readonly (keyof EventLogEntry)[];

/**
 * Entries logged together: one statement for every event that ended while the previous one ran
 * (the store's batcher, ADR 0031), so the log costs a fraction of a statement per event under
 * load. The payload and the receiver's answer travel as JSON strings (they are text columns:
 * a forwarded answer may repeat a member name, which only its text keeps).
 */
const recordStatement = {
  name: 'store.eventLog.record',
  text: `INSERT INTO event_log (${fields.join(', ')}, names_users, names_payments, at)
    SELECT ${fields.join(', ')}, names_users, names_payments, at FROM json_to_recordset($1::json) AS e (event_id text, direction text, app_id text,
      client_id text, event_type text, external_event_id text, payload text, outcome text, error_code text,
      receiver_http_status int, receiver_response text, duration_ms int, names_users text[], names_payments text[], at timestamptz)`,
};

export function createEventLog(db: Db, clock: Clock): EventLog {
  const recordBatched = batched<EventLogEntry & { at: string }, void>(
    async (entries) => {
      await db.query(recordStatement, [JSON.stringify(entries)]);
      return entries.map(() => undefined);
    },
    batchingFor(db, { maxInFlight: 1, maxBatch: 256 }),
  );
  return {
    record(entry) {
      const row: EventLogEntry & { at: string } = { ...entry, at: clock().toISOString() };
      return recordBatched(row);
    },

    async findByEventId(eventId) {
      const rows = await db.query<EventLogEntry & { at: Date }>(
        `SELECT ${fields.join(', ')}, at FROM event_log WHERE event_id = $1 ORDER BY id`,
        [eventId],
      );
      return rows.map((row) => ({ ...row, at: row.at.toISOString() }));
    },
  };
}
