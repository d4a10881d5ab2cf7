import { createServer, type Server } from 'node:http';
import type { components } from '../../generated/types/miniapp.js';
import { parseLossless } from '../../src/contract/json.js';
import { localUrl } from '../../test/resilience/support/announce.js';

/** One E6 as the fake miniapp server saw it. */
export interface Arrival {
  eventId: string;
  orderPaymentId: string;
  attempt: number;
  /** Wall-clock milliseconds (wallClockMs), comparable between the bench's processes. */
  at: number;
}

/** Milliseconds since the epoch at sub-millisecond resolution: one clock for every process of the run. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * A fake miniapp server: records every E6 callback and acknowledges it with `{"code":"SUCCESS"}`,
 * acknowledges every E7 event with `{"received":true}`. `GET /arrivals` gives the E6s recorded
 * since the last `POST /arrivals/reset`, so the bench can run it in a process of its own
 * (fakes/miniappProcess.ts) and still check every delivery.
 */
export async function startFakeMiniapp(): Promise<{ url: string; arrivals: Arrival[]; server: Server; close(): Promise<void> }> {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = wallClockMs();
      const answer = (body: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      if (req.url === '/arrivals' && req.method === 'GET') return answer(JSON.stringify(arrivals));
      if (req.url === '/arrivals/count' && req.method === 'GET') return answer(JSON.stringify(countArrivals(arrivals)));
      if (req.url === '/arrivals/reset' && req.method === 'POST') {
        arrivals.length = 0;
        return answer('{}');
      }
      if (req.url === '/events') return answer('{"received":true}');
      const body = parseLossless(Buffer.concat(chunks).toString('utf8')) as components['schemas']['OrderCompletion'];
      arrivals.push({
        eventId: String(req.headers['x-minibridge-event-id']),
        orderPaymentId: body.hostapp_order_payment_id,
        attempt: Number(req.headers['x-minibridge-delivery-attempt']),
        at,
      });
      answer('{"code":"SUCCESS"}');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: localUrl(server),
    arrivals,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The E6s a fake miniapp in another process has recorded since its last reset. */
export async function arrivalsAt(miniappUrl: string): Promise<Arrival[]> {
  const response = await fetch(`${miniappUrl}/arrivals`);
  return (await response.json()) as Arrival[];
}

/** How many E6s a fake miniapp in another process has recorded since its last reset (cheap to ask often). */
export async function arrivalCount(miniappUrl: string): Promise<ReturnType<typeof countArrivals>> {
  const response = await fetch(`${miniappUrl}/arrivals/count`);
  return (await response.json()) as ReturnType<typeof countArrivals>;
}

export async function resetArrivals(miniappUrl: string): Promise<void> {
  await (await fetch(`${miniappUrl}/arrivals/reset`, { method: 'POST' })).text();
}

/** How many E6s arrived, for how many distinct events, and how many came twice. */
export function countArrivals(arrivals: readonly Arrival[]): { arrived: number; distinct: number; duplicates: number } {
  const distinct = new Set(arrivals.map((arrival) => arrival.eventId)).size;
  return { arrived: arrivals.length, distinct, duplicates: arrivals.length - distinct };
}
