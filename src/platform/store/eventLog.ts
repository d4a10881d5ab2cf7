import type { Db } from './db.js';
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

export function createEventLog(db: Db, clock: Clock): EventLog {
  return {
    async record(entry) {
      await db.query(
        `INSERT INTO event_log (${fields.join(', ')}, at)
         VALUES (${fields.map((_, i) => `$${i + 1}`).join(', ')}, $${fields.length + 1})`,
        [...fields.map((field) => entry[field]), clock()],
      );
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
