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
}

export function createMetrics(pendingDeliveries: () => Promise<number>): Metrics {
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
  };
  new Gauge({
    name: 'minibridge_e6_pending',
    help: 'E6 deliveries waiting for an attempt.',
    registers: [registry],
    async collect() {
      this.set(await pendingDeliveries());
    },
  });
  return metrics;
}
