import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake partner server received. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** How a fake partner answers one route: a JSON value, or full control of the response. */
export type FakeBehaviour = unknown | ((request: Received, res: ServerResponse) => void | Promise<void>);

/**
 * A real HTTP server standing in for a host app or miniapp server: routes answer with scripted
 * behaviours, and every request is recorded (raw body text, so exact digits can be checked).
 */
export class FakePartner {
  readonly received: Received[] = [];
  private readonly routes = new Map<string, FakeBehaviour>();
  private server!: Server;
  url = '';

  on(path: string, behaviour: FakeBehaviour): this {
    this.routes.set(path, behaviour);
    return this;
  }

  receivedAt(path: string): Received[] {
    return this.received.filter((request) => request.path === path);
  }

  async start(): Promise<this> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const url = new URL(req.url ?? '/', 'http://fake');
      const request: Received = {
        method: req.method ?? 'GET',
        path: url.pathname,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8') || url.search.slice(1),
      };
      this.received.push(request);
      const behaviour = this.routes.get(url.pathname);
      if (behaviour === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error_code":"NOT_FOUND"}');
      } else if (typeof behaviour === 'function') {
        await (behaviour as (request: Received, res: ServerResponse) => void | Promise<void>)(request, res);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour));
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
