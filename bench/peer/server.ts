/**
 * The peer: E1 built the way most teams would build it. Express, express-openapi-validator on
 * the same bundled contract (generated/openapi/platform.json), a Basic credentials check, and the
 * E3 call made with fetch. Kept here for the benchmark only; it is not part of the product. It
 * stores nothing (no idempotency, no order record), which flatters it against Minibridge.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { packageRoot } from '../../src/contract/documents.js';
import { announce, exitOnSignal, localUrl } from '../../test/resilience/support/announce.js';

const hostapp = {
  url: `${process.env.BENCH_HOSTAPP_URL}/create-order-payment`,
  authorization: `Token ${Buffer.from(`${process.env.BENCH_CLIENT_ID}:${process.env.BENCH_HOSTAPP_SECRET}`).toString('base64')}`,
};
const expected = Buffer.from(`Basic ${Buffer.from(`${process.env.BENCH_APP_ID}:${process.env.BENCH_MINIAPP_SECRET}`).toString('base64')}`);

const app = express();
app.use(express.json({ limit: '1mb' }));
app.use(
  OpenApiValidator.middleware({
    apiSpec: join(packageRoot(), 'generated', 'openapi', 'platform.json'),
    validateRequests: true,
    validateResponses: false,
    validateSecurity: false,
    ignoreUndocumented: true,
  }),
);
app.post('/api/v1/orders/create-order-payment/', async (req: Request, res: Response) => {
  const given = Buffer.from(req.headers.authorization ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    res.status(400).json({ error_code: 'UNAUTHORIZED', error_message: 'bad credentials' });
    return;
  }
  const { app_id, order } = req.body as { app_id: string; order: { hostapp_user_id?: string } };
  try {
    const answer = await fetch(hostapp.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: hostapp.authorization,
        ...(order.hostapp_user_id ? { 'x-user-id': order.hostapp_user_id } : {}),
      },
      body: JSON.stringify({ app_id, order }),
      signal: AbortSignal.timeout(10_000),
    });
    const created = (await answer.json()) as { order_payment_id?: string };
    if (!answer.ok || typeof created.order_payment_id !== 'string') throw new Error('bad E3 answer');
    res.json({ order_payment_id: created.order_payment_id });
  } catch {
    res.status(400).json({ error_code: 'HOSTAPP_UNAVAILABLE', error_message: 'the host app did not answer' });
  }
});
app.use((error: { status?: number; message?: string }, _req: Request, res: Response, _next: NextFunction) => {
  res.status(error.status ?? 500).json({ error_code: 'INVALID_ORDER_DATA', error_message: error.message });
});

const server = createServer(app);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce(localUrl(server)));
exitOnSignal(() => new Promise<void>((resolve) => server.close(() => resolve())));
