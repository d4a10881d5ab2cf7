import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseLossless } from '../../../src/contract/json.js';

/** How a fake partner answers one route; `ok` answers with what the route's `answer` builds. */
export type Behaviour =
  | { kind: 'ok' }
  /** Never answers (the platform's time-out must end the call). */
  | { kind: 'hang' }
  | { kind: 'status'; status: number }
  | { kind: 'notJson' }
  /** HTTP 200 JSON that breaks the partner API. */
  | { kind: 'invalidBody'; body: string }
  /** Answers `ok`, after `ms`. */
  | { kind: 'slow'; ms: number }
  /** Sends the headers and half a body, then destroys the socket. */
  | { kind: 'closeMidResponse' }
  /** Fails the first `times` requests with HTTP 503, then answers `ok`. */
  | { kind: 'failFirst'; times: number };

export interface Received {
  path: string;
  method: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  raw: string;
}

export type Answer = (request: Received) => unknown;

/**
 * A partner server (host app or miniapp) on loopback that counts and records every request it
 * receives per path, and answers as the behaviour set for the path says.
 */
export class FakePartner {
  readonly received = new Map<string, Received[]>();
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly failures = new Map<string, number>();
  private server: Server | undefined;
  url = '';

  constructor(private readonly answers: Record<string, Answer>) {}

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', resolve);
    });
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  behave(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
    this.failures.delete(path);
  }

  count(path: string): number {
    return this.received.get(path)?.length ?? 0;
  }

  requests(path: string): Received[] {
    return this.received.get(path) ?? [];
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    let body: unknown;
    try {
      body = raw ? parseLossless(raw) : undefined;
    } catch {
      body = undefined;
    }
    const request: Received = { path, method: req.method ?? '', headers: req.headers, body, raw };
    const list = this.received.get(path) ?? [];
    list.push(request);
    this.received.set(path, list);
    const answer = this.answers[path];
    if (!answer) {
      res.writeHead(404).end();
      return;
    }
    const behaviour = this.behaviours.get(path) ?? { kind: 'ok' };
    const json = (status: number, text: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(text);
    switch (behaviour.kind) {
      case 'ok':
        return void json(200, JSON.stringify(answer(request)));
      case 'hang':
        return;
      case 'status':
        return void json(behaviour.status, '{"error":"boom"}');
      case 'notJson':
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not json</html>');
      case 'invalidBody':
        return void json(200, behaviour.body);
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, behaviour.ms));
        return void json(200, JSON.stringify(answer(request)));
      case 'closeMidResponse': {
        const text = JSON.stringify(answer(request));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length * 2) });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      case 'failFirst': {
        const failed = this.failures.get(path) ?? 0;
        if (failed < behaviour.times) {
          this.failures.set(path, failed + 1);
          return void json(503, '{"error":"not yet"}');
        }
        return void json(200, JSON.stringify(answer(request)));
      }
    }
  }
}

export const HOSTAPP_PATHS = {
  createOrderPayment: '/create-order-payment',
  paymentStatus: '/get-payment-status',
  events: '/events',
} as const;
export const MINIAPP_PATHS = { completeOrder: '/complete-order', events: '/events' } as const;

/** A host app server answering E3 with a new order_payment_id each time, E4 in_process, E7 received. */
export function fakeHostapp(): FakePartner {
  let next = 0;
  const prefix = `hop_${process.pid}_${Date.now().toString(36)}_`;
  return new FakePartner({
    [HOSTAPP_PATHS.createOrderPayment]: () => ({ order_payment_id: `${prefix}${next++}` }),
    [HOSTAPP_PATHS.paymentStatus]: (request) => {
      const query = (request.body ?? Object.fromEntries(new URL(`http://x${request.path}`).searchParams)) as Record<string, string>;
      return { app_id: query.app_id, client_id: query.client_id, order_payment_id: query.order_payment_id, payment_status: 'in_process' };
    },
    [HOSTAPP_PATHS.events]: () => ({ received: true }),
  });
}

/** A miniapp server acknowledging every E6 and E7. */
export function fakeMiniapp(): FakePartner {
  return new FakePartner({
    [MINIAPP_PATHS.completeOrder]: () => ({ code: 'SUCCESS' }),
    [MINIAPP_PATHS.events]: () => ({ received: true }),
  });
}
