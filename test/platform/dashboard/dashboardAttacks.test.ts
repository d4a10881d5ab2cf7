/**
 * An attacker's pass over the Dashboard API (ADR 0027): what a signed-in partner (or anyone)
 * could try beyond the IDOR matrix of dashboard.test.ts. Each test names what it attacks.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness, e1Body } from '../../support/platformHarness.js';

const operator = `Bearer ${ADMIN_TOKEN}`;
const hostappAuth = basicAuthorization(HOSTAPP.id, HOSTAPP.secret);
const hostappPath = `/api/v1/dashboard/hostapps/${HOSTAPP.id}`;
const miniappPath = `/api/v1/dashboard/miniapps/${MINIAPP.id}`;

const logLines: string[] = [];
const harness = new PlatformHarness();

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  await harness.start({ log: pino({ level: 'trace' }, sink) });
}, 120_000);
afterAll(() => harness.stop());

describe('a partner pointing the platform at internal addresses (SSRF)', () => {
  const internal = [
    'http://127.0.0.1:6379/',
    'http://localhost:5432/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.5/create',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://[::1]:8080/',
    'http://0.0.0.0:8080/',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
  ];
  test.each(internal)('a host app may not register %s as its own URL', async (url) => {
    const answer = await harness.call(
      'updateHostapp',
      { urls: { create_order_payment: url } },
      { authorization: hostappAuth, path: hostappPath },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error_code).toBe('INVALID_REQUEST');
    const miniapp = await harness.call(
      'updateMiniapp',
      { urls: { complete_order: url } },
      { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret), path: miniappPath },
    );
    expect(miniapp.status).toBe(400);
  });

  test('an operator still may (the sandbox and tests run partners on loopback)', async () => {
    const answer = await harness.call(
      'updateHostapp',
      { urls: { create_order_payment: `${harness.hostapp.url}/create-order-payment` } },
      { authorization: operator, path: hostappPath },
    );
    expect(answer.status).toBe(200);
  });

  test('a public https URL is accepted from the partner', async () => {
    const answer = await harness.call(
      'updateHostapp',
      { urls: { events: 'https://superapp.example/minibridge/events' } },
      { authorization: hostappAuth, path: hostappPath },
    );
    expect(answer.status).toBe(200);
  });
});

describe('URLs with credentials in them', () => {
  test('user:password@ in a URL is refused: it would be shown in settings and the audit log', async () => {
    const answer = await harness.call(
      'updateHostapp',
      { urls: { get_payment_status: 'https://user:hunter2@superapp.example/status' } },
      { authorization: operator, path: hostappPath },
    );
    expect(answer.status).toBe(400);
    expect(answer.text).not.toContain('hunter2');
  });
});

describe('bodies that try to pollute or overflow', () => {
  test.each([
    ['__proto__ at the top', '{"__proto__": {"polluted": true}, "name": "x"}'],
    ['__proto__ inside urls', '{"urls": {"__proto__": {"polluted": true}}}'],
    ['constructor.prototype', '{"constructor": {"prototype": {"polluted": true}}}'],
    ['an unknown member', '{"secret_key": "chosen-by-attacker"}'],
    ['features with an unknown member', '{"features": {"payments": true, "admin": true}}'],
  ])('%s: 400, nothing changed, Object.prototype clean', async (_name, body) => {
    const before = await harness.call('getHostapp', undefined, { authorization: operator, path: hostappPath });
    const answer = await harness.call('updateHostapp', body, { authorization: hostappAuth, path: hostappPath });
    expect(answer.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const after = await harness.call('getHostapp', undefined, { authorization: operator, path: hostappPath });
    expect(after.body).toEqual(before.body);
  });

  test('an oversized body is refused before it is read whole', async () => {
    const answer = await harness.call('updateHostapp', JSON.stringify({ name: 'x'.repeat(2_000_000) }), {
      authorization: hostappAuth,
      path: hostappPath,
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error_code).toBe('PAYLOAD_TOO_LARGE');
  });

  test('a body that is not JSON is refused as such, not as a platform failure', async () => {
    const answer = await harness.call('updateHostapp', 'name=x', {
      authorization: hostappAuth,
      path: hostappPath,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(answer.status).toBe(415);
  });
});

describe('secrets appear once', () => {
  test('an issued secret is in the issuing answer only: not in reads, lists, audit, errors or logs', async () => {
    // A host app of its own: the rotation below revokes its first secret, which the other tests' host app keeps.
    const created = await harness.call(
      'createHostapp',
      { client_id: 'ha_rotating', name: 'Rotating', features: { payments: true } },
      { authorization: operator },
    );
    expect(created.status).toBe(201);
    const firstSecret: string = created.body.credential.secret;
    const firstAuth = basicAuthorization('ha_rotating', firstSecret);
    const hostappPath = '/api/v1/dashboard/hostapps/ha_rotating';
    const issued = await harness.call(
      'issueCredential',
      { kind: 'secret_key' },
      { authorization: firstAuth, path: `${hostappPath}/credentials` },
    );
    expect(issued.status).toBe(201);
    const secret: string = issued.body.secret;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const newAuth = basicAuthorization('ha_rotating', secret);
    const reads = await Promise.all([
      harness.call('getHostapp', undefined, { authorization: newAuth, path: hostappPath }),
      harness.call('listCredentials', undefined, { authorization: newAuth, path: `${hostappPath}/credentials` }),
      harness.call('listAuditEntries', undefined, { authorization: operator, path: `${hostappPath}/audit` }),
      harness.call('listHostapps', undefined, { authorization: operator }),
      // An error answer to a request made with the new secret.
      harness.call('updateHostapp', { token_prefix: 'has space' }, { authorization: newAuth, path: hostappPath }),
      harness.call('getPaymentStatus', { client_id: 'ha_rotating', order_payment_id: 'hop_x' }, { authorization: newAuth }),
    ]);
    for (const read of reads) expect(read.text).not.toContain(secret);
    const logs = logLines.join('');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(firstSecret);
    expect(logs).not.toContain(HOSTAPP.secret);
    // The rotation ends: the new secret is the only one; the old one no longer signs in.
    const credentials = reads[1]!.body.credentials as { credential_id: string; status: string }[];
    const old = credentials.find((c) => c.credential_id !== issued.body.credential_id && c.status === 'active')!;
    const revoked = await harness.call('revokeCredential', undefined, {
      authorization: newAuth,
      path: `${hostappPath}/credentials/${old.credential_id}/revoke`,
    });
    expect(revoked.status).toBe(200);
    const refused = await harness.call('getHostapp', undefined, { authorization: firstAuth, path: hostappPath });
    expect(refused.status).toBe(401);
    // Revoking the last one is refused: a partner cannot lock itself out.
    const last = await harness.call('revokeCredential', undefined, {
      authorization: newAuth,
      path: `${hostappPath}/credentials/${issued.body.credential_id}/revoke`,
    });
    expect(last.status).toBe(409);
  });

  test('ten concurrent issues leave at most two active secrets', async () => {
    // A miniapp of its own: the registered one keeps a single signing secret for the other tests.
    const created = await harness.call(
      'createMiniapp',
      { app_id: 'ma_concurrent', name: 'Concurrent', hostapps: [HOSTAPP.id] },
      { authorization: operator },
    );
    expect(created.status).toBe(201);
    const miniappAuth = basicAuthorization('ma_concurrent', created.body.credential.secret);
    const miniappPath = '/api/v1/dashboard/miniapps/ma_concurrent';
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        harness.call('issueCredential', { kind: 'signing_secret' }, { authorization: miniappAuth, path: `${miniappPath}/credentials` }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(2);
    const list = await harness.call('listCredentials', undefined, { authorization: operator, path: `${miniappPath}/credentials` });
    const active = (list.body.credentials as { kind: string; status: string }[]).filter(
      (c) => c.kind === 'signing_secret' && c.status === 'active',
    );
    expect(active).toHaveLength(2);
  });
});

describe('an E1 after the URL changed', () => {
  test('E1 still answers in the contract shape', async () => {
    const answer = await harness.call('createOrderPayment', e1Body(), { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret) });
    expect(answer.status).not.toBe(500);
  });
});

describe('sign-in timing', () => {
  test('an id nobody registered costs the same checks as a registered one with a wrong secret', async () => {
    const box = harness.running.platform.partners!.box;
    const checks: number[] = [];
    const original = box.matchesDecoded.bind(box);
    const spy = vi.spyOn(box, 'matchesDecoded').mockImplementation((secret, verifiers) => {
      // What a check costs: one HMAC and at least two comparisons, more only for more verifiers.
      checks.push(Math.max(2, verifiers.length));
      return original(secret, verifiers);
    });
    try {
      const costOf = async (id: string) => {
        checks.length = 0;
        const answer = await harness.call('listHostapps', undefined, { authorization: basicAuthorization(id, 'wrong-secret-entirely') });
        expect(answer.status).toBe(401);
        return [...checks];
      };
      const unknown = await costOf('ma_nobody_registered');
      expect(unknown).toEqual(await costOf(HOSTAPP.id));
      expect(unknown).toEqual(await costOf(MINIAPP.id));
      expect(unknown).toEqual([2, 2]);
    } finally {
      spy.mockRestore();
    }
  });
});
