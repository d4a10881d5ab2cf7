import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  /** May contain `[<id>]`: each request gets a fresh unique id there. */
  body?: string;
  connections: number;
  durationSeconds: number;
  /** Requests per second across all connections; unset means as fast as the server answers. */
  overallRate?: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  /** Answers other than 2xx, connection errors and time-outs. */
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
    overallRate: options.overallRate,
    timeout: 20,
  });
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
