import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHostappApp } from '../../examples/hostapp-express/app.js';
import { tableReport, verify } from '../../src/shipped/conformance/index.js';
import { serve, type RunningServer } from './reference.js';

const credentials = { id: 'ha_example', secret: 'example-hostapp-secret' };
let server: RunningServer;

beforeAll(async () => {
  server = await serve(createHostappApp({ clientId: credentials.id, secretKey: credentials.secret }));
});
afterAll(() => server.close());

it('the example host app server passes verify hostapp', { timeout: 60_000 }, async () => {
  const report = await verify({
    subject: 'hostapp',
    url: server.url,
    credentials,
    tokenPrefix: 'Token',
    signingSecrets: [],
    paths: {},
    e4Method: 'POST',
  });
  expect(report.passed, tableReport(report)).toBe(true);
  expect(report.results.filter((result) => result.outcome === 'pass').length).toBeGreaterThanOrEqual(19);
});
