import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { requestLog } from '../../../src/platform/http/requestLog.js';

const lines: Array<Record<string, unknown>> = [];
const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
let base = '';
let close: () => void;

beforeAll(async () => {
  const app = express();
  app.use(requestLog(app, log));
  app.get('/quiet', (_req, res) => void res.json({ ok: true }));
  app.get('/loud', (req, res) => {
    req.log.warn({ detail: 1 }, 'handler logged');
    res.json({ ok: true });
  });
  app.get('/healthz', (_req, res) => void res.json({ ok: true }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

async function get(path: string, headers: Record<string, string> = {}) {
  lines.length = 0;
  const response = await fetch(base + path, { headers });
  await response.text();
  // The completion line is written on 'finish', which can come after the client has the answer.
  for (let wait = 0; wait < 100 && !lines.some((line) => line.msg === 'request completed'); wait++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  return response;
}

describe('request ids and request logging', () => {
  test('a plain X-Request-Id is echoed and carried by every line of the request', async () => {
    const response = await get('/loud', { 'X-Request-Id': 'trace-42.a:b' });
    expect(response.headers.get('x-request-id')).toBe('trace-42.a:b');
    expect(lines.map((line) => [line.msg, line.req_id])).toEqual([
      ['handler logged', 'trace-42.a:b'],
      ['request completed', 'trace-42.a:b'],
    ]);
    expect(lines[1]).toMatchObject({ req: { method: 'GET', url: '/loud' }, res: { statusCode: 200 } });
  });

  test('an id that is not a plain token is replaced by a new UUID', async () => {
    const response = await get('/quiet', { 'X-Request-Id': 'has spaces and "quotes"' });
    const id = response.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(lines).toEqual([expect.objectContaining({ msg: 'request completed', req_id: id })]);
  });

  test('probes get an id but no log line', async () => {
    lines.length = 0;
    const probe = await fetch(`${base}/healthz`);
    await probe.text();
    expect(probe.headers.get('x-request-id')).toBeTruthy();
    // The next request on the same keep-alive connection is answered after the probe finished.
    const after = await fetch(`${base}/quiet`);
    await after.text();
    for (let wait = 0; wait < 100 && lines.length === 0; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lines.map((line) => (line.req as { url: string }).url)).toEqual(['/quiet']);
  });
});
