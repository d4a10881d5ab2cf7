import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRoundRobinProxy, type RoundRobinProxy } from '../../bench/proxy/roundRobin.js';

/** An upstream that answers with its name and what it received. */
function echo(name: string): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = req.url === '/conflict' ? 409 : 200;
      res.writeHead(status, { 'content-type': 'application/json', 'x-upstream': name });
      res.end(
        JSON.stringify({
          name,
          method: req.method,
          url: req.url,
          body: Buffer.concat(chunks).toString(),
          authorization: req.headers.authorization,
        }),
      );
    });
  });
}

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('the bench round-robin proxy', () => {
  const upstreams = [echo('a'), echo('b')];
  let proxy: RoundRobinProxy;
  let proxyUrl: string;
  /** A port nothing listens on: an upstream that is down. */
  let downUrl: string;

  beforeAll(async () => {
    const urls = await Promise.all(upstreams.map(listen));
    const probe = createServer();
    downUrl = await listen(probe);
    await close(probe);
    proxy = createRoundRobinProxy(urls);
    proxyUrl = await listen(proxy.server);
  });
  afterAll(async () => {
    await close(proxy.server);
    await Promise.all(upstreams.map(close));
  });

  it('sends requests to the upstreams in turn, with method, path, headers and body as sent', async () => {
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${proxyUrl}/api/v1/x?i=${i}`, {
        method: 'POST',
        headers: { authorization: 'Basic abc' },
        body: `{"i":${i}}`,
      });
      const seen = (await response.json()) as { name: string; method: string; url: string; body: string; authorization: string };
      expect(seen).toMatchObject({ method: 'POST', url: `/api/v1/x?i=${i}`, body: `{"i":${i}}`, authorization: 'Basic abc' });
      expect(response.headers.get('x-upstream')).toBe(seen.name);
      names.push(seen.name);
    }
    expect(names).toEqual(['a', 'b', 'a', 'b']);
  });

  it("passes the upstream's status on and counts each upstream's answers", async () => {
    const before = [...proxy.served];
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await fetch(`${proxyUrl}/conflict`, { method: 'POST', body: '{}' })).status);
    expect(statuses).toEqual([409, 409]);
    expect(proxy.served.map((count, i) => count - before[i]!)).toEqual([1, 1]);
    const report = (await (await fetch(`${proxyUrl}/__proxy/served`)).json()) as { served: number[] };
    expect(report.served).toEqual(proxy.served);
  });

  it('answers 502 for an upstream that is down, without sending the request to another', async () => {
    const target = echo('c');
    const targetUrl = await listen(target);
    const halfDown = createRoundRobinProxy([downUrl, targetUrl]);
    const url = await listen(halfDown.server);
    try {
      const first = await fetch(`${url}/pay`, { method: 'POST', body: '{}' });
      expect(first.status).toBe(502);
      expect(await first.json()).toEqual({ error_code: 'UPSTREAM_UNREACHABLE' });
      const second = await fetch(`${url}/pay`, { method: 'POST', body: '{}' });
      expect(((await second.json()) as { name: string }).name).toBe('c');
      expect(halfDown.served).toEqual([0, 1]);
      expect(halfDown.unreachable).toBe(1);
    } finally {
      await close(halfDown.server);
      await close(target);
    }
  });

  it('refuses to start without an upstream', () => {
    expect(() => createRoundRobinProxy([])).toThrow(/at least one upstream/);
  });
});
