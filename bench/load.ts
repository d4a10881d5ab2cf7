import { Agent, request } from 'node:http';
import autocannon from 'autocannon';
import { percentile } from './flows.js';

export interface LoadOptions {
  url: string;
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  /** May contain `[<id>]`: each request gets a fresh unique id there. */
  body?: string;
  connections: number;
  durationSeconds: number;
  /** Stop after this many requests instead of after durationSeconds. */
  amount?: number;
  /** A sequence each connection sends in turn (autocannon's requests), e.g. E1 then the E5 of its answer. */
  requests?: autocannon.Request[];
  /** Each answer's body; a false verdict counts the request as failed (autocannon's mismatches). */
  verifyBody?: (body: string) => boolean;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  /** Answers other than 2xx, answers whose body failed verifyBody, connection errors and time-outs. */
  failures: number;
}

/** One autocannon run on loopback. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'POST',
    headers: options.headers,
    body: options.body,
    idReplacement: options.body?.includes('[<id>]') ?? false,
    connections: options.connections,
    duration: options.durationSeconds,
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    ...(options.requests ? { requests: options.requests } : {}),
    ...(options.verifyBody ? { verifyBody: (body: unknown) => options.verifyBody!(String(body)) } : {}),
    timeout: 20,
  });
  return {
    // Every request over the whole run: autocannon's per-second average drops a short run's last partial second.
    requestsPerSecond: result.requests.total / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts + result.mismatches,
  };
}

/**
 * Open-loop load at a steady rate: one request every 1/rate s, at most `connections` in flight.
 * autocannon's `overallRate` cannot measure latency: each connection sends its whole quota at
 * the start of every second, so the server sees a burst per second and the p99 is queueing.
 * Latency counts from each request's scheduled start, so a stall is charged to every request it
 * delays (no coordinated omission).
 */
export async function paced(options: LoadOptions & { rate: number }): Promise<LoadResult & { latenciesMs: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const interval = 1000 / options.rate;
  const total = Math.round(options.rate * options.durationSeconds);
  const latencies: number[] = [];
  let failures = 0;
  const inFlight: Array<Promise<void>> = [];
  const started = performance.now();
  for (let index = 0; index < total; index++) {
    const due = started + index * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = options.body?.replaceAll('[<id>]', `p${index}-${started.toFixed(0)}`);
    inFlight.push(
      send(agent, options, body).then(
        (ok) => {
          latencies.push(performance.now() - due);
          if (!ok) failures++;
        },
        () => {
          failures++;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  const elapsedSeconds = (performance.now() - started) / 1000;
  agent.destroy();
  return {
    requestsPerSecond: latencies.length / elapsedSeconds,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    requests: latencies.length,
    failures,
    latenciesMs: latencies,
  };
}

/** One request; resolves whether it was answered 2xx. */
function send(agent: Agent, options: LoadOptions, body: string | undefined): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      options.url,
      { method: options.method ?? 'POST', headers: options.headers, agent, timeout: 20_000 },
      (response) => {
        response.resume();
        response.on('end', () => resolve((response.statusCode ?? 0) >= 200 && (response.statusCode ?? 0) < 300));
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('timed out')));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
