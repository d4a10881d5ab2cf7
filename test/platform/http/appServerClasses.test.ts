/**
 * The platform's requests and responses are born with Express's prototypes (ADR 0036), so the
 * Object.setPrototypeOf Express runs on each request changes nothing: checked where node:http
 * hands them over, before Express runs, on a bare app and on the platform's own server. They are
 * still what Node and Express expect (an IncomingMessage and a ServerResponse that answer), and
 * V8 keeps them in fast mode.
 */
import { execFile } from 'node:child_process';
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { appServerClasses } from '../../../src/platform/http/appServerClasses.js';
import { e1Body, PlatformHarness } from '../../support/platformHarness.js';

const objectShapes = fileURLToPath(new URL('../support/objectShapes.ts', import.meta.url));

interface Arrival {
  request: object | null;
  response: object | null;
}

/** The prototypes of each request and response as node:http emits them, before Express sees them. */
function recordArrivals(server: Server): Arrival[] {
  const arrivals: Arrival[] = [];
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    arrivals.push({ request: Object.getPrototypeOf(req) as object | null, response: Object.getPrototypeOf(res) as object | null });
  });
  return arrivals;
}

describe('a bare Express app served with appServerClasses', () => {
  const app = express();
  const seenInRoute: Array<{ request: boolean; response: boolean; method: string | undefined }> = [];
  app.post('/echo', express.json(), (req, res) => {
    seenInRoute.push({
      request: req instanceof IncomingMessage,
      response: res instanceof ServerResponse,
      method: req.get('x-probe'),
    });
    res.status(201).json({ got: req.body as unknown });
  });
  const server = createServer({ ...appServerClasses(app) }, app);
  const arrivals = recordArrivals(server);
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('requests arrive with app.request and app.response as their prototypes, and are answered as usual', async () => {
    // Only this test's request: the other tests send theirs to the same server.
    const [arrivedBefore, seenBefore] = [arrivals.length, seenInRoute.length];
    const answer = await fetch(`${url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-probe': 'here' },
      body: JSON.stringify({ a: 1 }),
    });
    expect(answer.status).toBe(201);
    expect(await answer.json()).toEqual({ got: { a: 1 } });
    const arrived = arrivals.slice(arrivedBefore);
    expect(arrived).toHaveLength(1);
    expect(arrived[0]!.request).toBe(app.request);
    expect(arrived[0]!.response).toBe(app.response);
    expect(seenInRoute.slice(seenBefore)).toEqual([{ request: true, response: true, method: 'here' }]);
  });

  test('what the app adds to its request prototype before is still there', async () => {
    const decorated = express();
    Object.defineProperty(decorated.request, 'greeting', { configurable: true, get: () => 'hello' });
    decorated.get('/greet', (req, res) => {
      res.json({ greeting: (req as unknown as { greeting: string }).greeting, app: req.app === decorated });
    });
    const decoratedServer = createServer({ ...appServerClasses(decorated) }, decorated);
    await new Promise<void>((resolve) => decoratedServer.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(decoratedServer.address() as AddressInfo).port}/greet`);
      expect(await answer.json()).toEqual({ greeting: 'hello', app: true });
    } finally {
      await new Promise<void>((resolve) => decoratedServer.close(() => resolve()));
    }
  });

  test('V8 keeps the request and the response in fast mode once Express and a route used them', async () => {
    // A constructor of our own that calls Node's on another object left them in dictionary mode.
    const printed = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', objectShapes], { timeout: 60_000 }, (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );
    expect(JSON.parse(printed)).toEqual({ request: true, response: true });
  }, 90_000);

  test('an unknown route still gets Express’s own 404', async () => {
    const answer = await fetch(`${url}/nowhere`);
    expect(answer.status).toBe(404);
    await answer.text();
  });
});

describe('the platform server', () => {
  const harness = new PlatformHarness();
  let arrivals: Arrival[] = [];
  beforeAll(async () => {
    harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_classes_1' });
    await harness.start();
    arrivals = recordArrivals(harness.running.server);
  }, 120_000);
  afterAll(() => harness.stop());

  test('hands Express requests that already carry its prototypes, and E1 is answered', async () => {
    const answer = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ order_payment_id: 'hop_classes_1' });
    expect(arrivals).toHaveLength(1);
    // The app behind the server's other 'request' listener (the platform's, which answers E1
    // before Express): its own prototypes, not another app's (which Express would swap in again
    // on every request).
    const served = (
      harness.running.server.listeners('request').find((listener) => 'app' in listener) as { app: express.Express } | undefined
    )?.app;
    expect(served).toBeDefined();
    expect(arrivals[0]!.request).toBe(served!.request);
    expect(arrivals[0]!.response).toBe(served!.response);
  });
});
