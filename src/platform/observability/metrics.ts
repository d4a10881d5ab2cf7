import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The platform's Prometheus metrics (served at /metrics). */
export interface Metrics {
  registry: Registry;
  requests: Counter<'operation' | 'status'>;
  requestSeconds: Histogram<'operation'>;
  partnerCalls: Counter<'operation' | 'outcome'>;
  partnerCallSeconds: Histogram<'operation'>;
  deliveries: Counter<'outcome'>;
  events: Counter<'direction' | 'outcome'>;
  /** Requests counted by the instance's own budget because the shared rate-limit store failed (ADR 0029). */
  rateLimitFallbacks: Counter<'store'>;
  /** 1 while the database answers, 0 during an outage (ADR 0037). */
  databaseUp: Gauge;
  /** Times the database went down, as this instance saw it (ADR 0037). */
  databaseOutages: Counter;
  /** The platform's own status queries (reconciliation, ADR 0039), by what came of them. */
  reconcileAsks: Counter<'outcome'>;
  /** Payments found still in process after their expiry (stuck), as they became so. */
  paymentsStuck: Counter;
  /** Rows the retention purge deleted or redacted, by kind of record (ADR 0041). */
  recordsPurged: Counter<'kind'>;
  /** Purge batches run, by kind of record. */
  purgeBatches: Counter<'kind'>;
  /** Statement days this instance closed (ADR 0041). */
  statementDaysClosed: Counter;
}

/** What the gauges read at each scrape; while the database is down they keep their last values. */
export interface MetricSources {
  pendingDeliveries(): Promise<number>;
  stuckPayments(): Promise<number>;
}

/**
 * `pendingDeliveries` is read at each scrape; while the database is down the gauge keeps its
 * last value rather than failing the whole scrape.
 */
export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics: Metrics = {
    registry,
    requests: new Counter({
      name: 'minibridge_http_requests_total',
      help: 'Requests served, by operation and status.',
      labelNames: ['operation', 'status'],
      registers: [registry],
    }),
    requestSeconds: new Histogram({
      name: 'minibridge_http_request_duration_seconds',
      help: 'Time to answer, by operation.',
      labelNames: ['operation'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    partnerCalls: new Counter({
      name: 'minibridge_partner_calls_total',
      help: 'Calls to partner servers, by operation and outcome.',
      labelNames: ['operation', 'outcome'],
      registers: [registry],
    }),
    partnerCallSeconds: new Histogram({
      name: 'minibridge_partner_call_duration_seconds',
      help: 'Partner call time, by operation.',
      labelNames: ['operation'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'minibridge_e6_attempts_total',
      help: 'E6 delivery attempts, by outcome (delivered, retry, dead).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    events: new Counter({
      name: 'minibridge_events_total',
      help: 'Event bridge events, by direction and outcome.',
      labelNames: ['direction', 'outcome'],
      registers: [registry],
    }),
    rateLimitFallbacks: new Counter({
      name: 'minibridge_rate_limit_fallbacks_total',
      help: 'Requests counted against the per-instance budget because the shared rate-limit store (redis or postgres) failed.',
      labelNames: ['store'],
      registers: [registry],
    }),
    databaseUp: new Gauge({
      name: 'minibridge_database_up',
      help: 'Whether this instance reaches its database (1) or is waiting for it to come back (0).',
      registers: [registry],
    }),
    databaseOutages: new Counter({
      name: 'minibridge_database_outages_total',
      help: 'Times this instance lost its database and waited for it to come back.',
      registers: [registry],
    }),
    reconcileAsks: new Counter({
      name: 'minibridge_reconcile_asks_total',
      help: "The platform's own status queries of payments left in process (E4), by outcome: in_process, settled, unchanged, conflict, not_found, failed, postponed (over the host app's budget).",
      labelNames: ['outcome'],
      registers: [registry],
    }),
    paymentsStuck: new Counter({
      name: 'minibridge_payments_became_stuck_total',
      help: 'Payments found still in process after their expiry (stuck), counted as they became so.',
      registers: [registry],
    }),
    recordsPurged: new Counter({
      name: 'minibridge_records_purged_total',
      help: 'Rows the retention purge deleted or redacted, by kind of record (x-retention).',
      labelNames: ['kind'],
      registers: [registry],
    }),
    purgeBatches: new Counter({
      name: 'minibridge_purge_batches_total',
      help: 'Retention purge batches run, by kind of record.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    statementDaysClosed: new Counter({
      name: 'minibridge_statement_days_closed_total',
      help: 'Statement days this instance closed.',
      registers: [registry],
    }),
  };
  metrics.databaseUp.set(1);
  new Gauge({
    name: 'minibridge_payments_stuck',
    help: 'Payments in process past their expiry that the platform could not settle: someone must look (the dashboard lists them).',
    registers: [registry],
    async collect() {
      try {
        this.set(await sources.stuckPayments());
      } catch {
        // The last value stands; minibridge_database_up says why it is not fresh.
      }
    },
  });
  new Gauge({
    name: 'minibridge_e6_pending',
    help: 'E6 deliveries waiting for an attempt.',
    registers: [registry],
    async collect() {
      try {
        this.set(await sources.pendingDeliveries());
      } catch {
        // The last value stands; minibridge_database_up says why it is not fresh.
      }
    },
  });
  return metrics;
}
