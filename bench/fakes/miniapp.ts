import { createServer, type Server } from 'node:http';
import type { components } from '../../generated/types/miniapp.js';
import { parseLossless } from '../../src/contract/json.js';
import { localUrl } from '../../test/resilience/support/announce.js';

/** One E6 as the fake miniapp server saw it. */
export interface Arrival {
  eventId: string;
  orderPaymentId: string;
  attempt: number;
  at: number;
}

/**
 * A fake miniapp server (E6) in this process, so arrival times share the clock of the E5 calls:
 * records every callback and acknowledges it with `{"code":"SUCCESS"}`.
 */
export async function startFakeMiniapp(): Promise<{ url: string; arrivals: Arrival[]; server: Server; close(): Promise<void> }> {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const body = parseLossless(Buffer.concat(chunks).toString('utf8')) as components['schemas']['OrderCompletion'];
      arrivals.push({
        eventId: String(req.headers['x-minibridge-event-id']),
        orderPaymentId: body.hostapp_order_payment_id,
        attempt: Number(req.headers['x-minibridge-delivery-attempt']),
        at,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":"SUCCESS"}');
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
