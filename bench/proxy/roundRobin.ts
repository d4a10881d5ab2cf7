/**
 * A tiny round-robin HTTP proxy for the two-instance run: each request goes to the next upstream
 * in turn, method, path, headers and body as sent, and the upstream's status, headers and body
 * come back as sent. An upstream that cannot be reached is answered 502 (the request is not
 * retried elsewhere: a load balancer that retried a payment could send it twice). `GET
 * /__proxy/served` gives how many answers each upstream gave, in the order given.
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own, never passed on. */
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!hopByHop.has(name) && value !== undefined) kept[name] = value;
  return kept;
}

export interface RoundRobinProxy {
  server: Server;
  /** Answers each upstream gave, in the order of `upstreams`. */
  served: number[];
  /** Requests answered 502 because their upstream could not be reached. */
  unreachable: number;
}

export function createRoundRobinProxy(upstreams: readonly string[]): RoundRobinProxy {
  if (upstreams.length === 0) throw new Error('a round-robin proxy needs at least one upstream');
  const targets = upstreams.map((url) => ({ url: new URL(url), agent: new Agent({ keepAlive: true, maxSockets: 256 }) }));
  const proxy: RoundRobinProxy = { server: undefined as unknown as Server, served: targets.map(() => 0), unreachable: 0 };
  let next = 0;
  proxy.server = createServer((req, res) => {
    if (req.url === '/__proxy/served' && req.method === 'GET') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ served: proxy.served, unreachable: proxy.unreachable }));
      return;
    }
    const index = next;
    next = (next + 1) % targets.length;
    const target = targets[index]!;
    const headers = { ...endToEnd(req.headers), host: target.url.host };
    const upstream = request(
      { host: target.url.hostname, port: target.url.port, path: req.url, method: req.method, headers, agent: target.agent },
      (answer) => {
        proxy.served[index]!++;
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      proxy.unreachable++;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"error_code":"UPSTREAM_UNREACHABLE"}');
    });
    req.pipe(upstream);
  });
  proxy.server.keepAliveTimeout = 60_000;
  return proxy;
}
