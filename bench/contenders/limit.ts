/**
 * The limit: a raw node:http forwarder that only forwards E1 to the host app's E3 and passes its
 * answer back. No validation, no authentication, no storage: what forwarding alone costs.
 */
import { Agent, createServer, request } from 'node:http';
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';

const target = new URL(`${process.env.BENCH_HOSTAPP_URL}/create-order-payment`);
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const upstream = request(
      target,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    upstream.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce(localUrl(server)));
exitOnSignal(() => new Promise<void>((resolve) => server.close(() => resolve())));
