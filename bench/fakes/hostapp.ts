/**
 * The fake host app server every contender calls, in its own process: E3 answers each
 * create-order-payment with a new order_payment_id (so no two E1s ever share one), E4 reports the
 * payment asked about as still in_process (the answer a polling miniapp gets while it waits; with
 * BENCH_E4_STATUS=paid, as paid: the answer that settles a payment reconciliation asks about), and
 * E7 acknowledges a miniapp's event with `{"received":true}`.
 */
import { createServer } from 'node:http';
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';

const prefix = `hop_${process.pid}_${Date.now().toString(36)}_`;
let next = 0;
const e4Status = process.env.BENCH_E4_STATUS ?? 'in_process';

/** E4: the three identifiers of the query, echoed with payment_status (in_process unless BENCH_E4_STATUS says). */
function paymentStatus(query: string): string {
  const { order_payment_id, app_id, client_id } = JSON.parse(query) as Record<string, string>;
  return JSON.stringify({ order_payment_id, app_id, client_id, payment_status: e4Status });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    let body: string;
    if (req.url === '/get-payment-status') body = paymentStatus(Buffer.concat(chunks).toString());
    else if (req.url === '/events') body = '{"received":true}';
    else body = `{"order_payment_id":"${prefix}${next++}"}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce(localUrl(server)));
exitOnSignal(() => new Promise<void>((resolve) => server.close(() => resolve())));
