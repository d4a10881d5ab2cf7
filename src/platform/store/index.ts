import { randomUUID } from 'node:crypto';
import { reservationStaleAfterMs } from '../../contract/limits.js';
import { financialRecordMembers, retentionBounds, statementDayRule } from '../../contract/records.js';
import { openDb, type Db, type DbConfig } from './db.js';
import { createEventLog, type EventLog } from './eventLog.js';
import { createIdempotency, type Idempotency } from './idempotency.js';
import { migrate } from './migrate.js';
import { createOrderPayments, type OrderPayments } from './orderPayments.js';
import { createOutbox, type Outbox } from './outbox.js';
import { createRateLimitBuckets, type RateLimitBuckets } from './rateLimitBuckets.js';
import type { PinnedIds } from './pinnedIds.js';
import { createPartners, type Partners } from './partners.js';
import { createPaymentRecords, type PaymentRecords } from './paymentRecords.js';
import { createReconciliation, type Reconciliation } from './reconciliation.js';
import { createReplayGuard, type ReplayGuard } from './replayGuard.js';
import { createRetention, type Retention } from './retention.js';
import { createStatements, type StatementRule, type Statements } from './statements.js';
import { systemClock, type Clock } from './time.js';

export type { Db, DbConfig, Listening, Queryable } from './db.js';
export { DatabaseUnavailableError } from './availability.js';
export type { EventDirection, EventLogEntry, EventOutcome, LoggedEvent } from './eventLog.js';
export type { IdempotencyScope, Reservation, ReserveResult } from './idempotency.js';
export type {
  CreateResult,
  NewOrderPayment,
  OrderPayment,
  OrderPaymentRef,
  StatusChange,
  StatusSource,
  TransitionRequest,
  TransitionResult,
} from './orderPayments.js';
export type { AttemptRecord, AttemptResult, ClaimOptions, ClaimedDelivery, ListDeliveriesQuery, RecordedAttempt } from './outbox.js';
export { InvalidCursorError, lostAttemptError } from './outbox.js';
export type { CredentialRow, NewAuditEntry, PartnerKind, PartnerRow, Partners, PartnerSnapshotRows } from './partners.js';
export { credentialView, PartnerExists, PARTNERS_CHANNEL } from './partners.js';
export type { Clock } from './time.js';
export { storableInstant } from './time.js';
export type { AskRecord, ReconcileClaim, ReconcileClaimOptions } from './reconciliation.js';
export type { PaymentQuery } from './paymentRecords.js';
export type { ErasureCounts, PurgeKind, Retention } from './retention.js';
export type { LinesPage, StatementOwner, StatementRule, Statements, TotalKey } from './statements.js';
export { decodeCursor as checkStatementCursor, utcDay } from './statements.js';
export type { BucketTake, RateLimitBuckets } from './rateLimitBuckets.js';

export interface Store {
  readonly db: Db;
  readonly orderPayments: OrderPayments;
  readonly idempotency: Idempotency;
  readonly outbox: Outbox;
  readonly eventLog: EventLog;
  readonly replayGuard: ReplayGuard;
  /** Rate-limit buckets every instance on this database shares (ADR 0029). */
  readonly rateLimitBuckets: RateLimitBuckets;
  /** The dashboard's partners, credentials and audit log (ADR 0027). */
  readonly partners: Partners;
  /** Leases and records the platform's own status queries of payments left in process (ADR 0039). */
  readonly reconciliation: Reconciliation;
  /** The dashboard's lists of payments and a payment's timeline. */
  readonly paymentRecords: PaymentRecords;
  /** Daily statements, closed once per day (ADR 0041). */
  readonly statements: Statements;
  /** The purge of aged records and the erasure of one user's personal data (ADR 0041). */
  readonly retention: Retention;
  /** Resolves when the database answers; for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  clock?: Clock;
  /** A pending idempotency reservation older than this was abandoned (default: E1's `x-reservation-stale-after-ms`). */
  idempotencyStaleAfterMs?: number;
  /** replayGuard.remember purges expired rows on one call in this many (default 100). */
  replayPurgeEvery?: number;
  /** Makes the X-Minibridge-Event-Id of each transition's E6 delivery. */
  newEventId?: () => string;
  /** Ids chosen for given rows instead of random ones (the sandbox's, ADR 0043). */
  pinnedIds?: PinnedIds;
  /** How long an Idempotency-Key is kept (default: the contract's `x-retention.idempotency_keys`). */
  idempotencyKeyTtlMs?: number;
  /** When statement days close (default: the contract's `x-statement-day`). */
  statementRule?: StatementRule;
}

export type { PinnedIds } from './pinnedIds.js';

export function newEventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

/** Builds the store over an open, migrated database. */
export function createStore(db: Db, options: StoreOptions = {}): Store {
  const clock = options.clock ?? systemClock;
  return {
    db,
    orderPayments: createOrderPayments(db, clock, options.newEventId ?? newEventId, financialRecordMembers(), options.pinnedIds?.delivery),
    idempotency: createIdempotency(
      db,
      clock,
      options.idempotencyStaleAfterMs ?? reservationStaleAfterMs(),
      options.idempotencyKeyTtlMs ?? retentionBounds().idempotency_keys.default * 86_400_000,
    ),
    outbox: createOutbox(db, clock),
    eventLog: createEventLog(db, clock),
    replayGuard: createReplayGuard(db, clock, options.replayPurgeEvery ?? 100),
    rateLimitBuckets: createRateLimitBuckets(db),
    partners: createPartners(db, clock, options.pinnedIds?.credential),
    reconciliation: createReconciliation(db, clock),
    paymentRecords: createPaymentRecords(db),
    statements: createStatements(db, clock, options.statementRule ?? statementDayRule()),
    retention: createRetention(db, clock, financialRecordMembers()),
    async ping() {
      await db.query('SELECT 1');
    },
    close: () => db.close(),
  };
}

/** Opens the configured database (PostgreSQL when databaseUrl is set, else PGlite), migrates it, and builds the store. */
export async function openStore(config: DbConfig, options: StoreOptions = {}): Promise<Store> {
  const db = await openDb(config);
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return createStore(db, options);
}
