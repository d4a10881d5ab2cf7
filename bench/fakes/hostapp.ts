/**
 * The fake host app server (E3) every contender forwards to, in its own process: answers each
 * create-order-payment with a new order_payment_id, so no two E1s ever share one.
 */
import { createServer } from 'node:http';
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';

const prefix = `hop_${process.pid}_${Date.now().toString(36)}_`;
let next = 0;

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const body = `{"order_payment_id":"${prefix}${next++}"}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce(localUrl(server)));
exitOnSignal(() => new Promise<void>((resolve) => server.close(() => resolve())));
