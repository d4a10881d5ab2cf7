/**
 * Rotating MINIBRIDGE_SECRETS_KEY itself (ADR 0038): restarted with the new key and the old one
 * as MINIBRIDGE_SECRETS_KEY_PREVIOUS, the platform re-seals every partner secret under the new
 * key, audits it, and keeps every verifier (a revoked key stays revoked, across a re-import too);
 * the old key alone, or a new key without the old one, stops the start with a message.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Config } from '../../../src/platform/config.js';
import { SecretBox } from '../../../src/platform/dashboard/secrets.js';
import { registryFrom, type RegistryFile } from '../../../src/platform/registry/loadRegistry.js';
import { startPlatform, type RunningPlatform } from '../../../src/platform/server.js';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { verifyRequest, signatureInput } from '../../../src/wire/signing.js';
import { describeOnBackends, openPlatformDatabase, type PlatformDatabase } from '../../support/databases.js';
import { FakePartner, type Received } from '../../support/fakePartners.js';

const OLD_KEY = randomBytes(32).toString('base64');
const NEW_KEY = randomBytes(32).toString('base64');
const ADMIN = 'rotation-admin-token';
const SIGNING = `whsec_${Buffer.from('rotation-hostapp-signing-secret!').toString('base64')}`;

describeOnBackends('rotating MINIBRIDGE_SECRETS_KEY', (backend) => {
  const hostapp = new FakePartner();
  let database: PlatformDatabase;
  let dataDir: string | undefined;
  let running: RunningPlatform | undefined;
  let orders = 0;
  const logs: string[] = [];

  const file = (name: string): RegistryFile => ({
    hostapps: [
      {
        client_id: 'ha_rot',
        secret_key: 'rotation-hostapp-secret',
        token_prefix: 'Token',
        use_access_token: false,
        payment_status_method: 'POST',
        features: { payments: true, event_bridge: false, event_receiver: false },
        urls: { create_order_payment: `${hostapp.url}/create-order-payment` },
        signing: { enabled: true, secrets: [SIGNING] },
      },
    ],
    miniapps: [
      {
        app_id: 'ma_rot',
        name,
        secret_key: 'rotation-miniapp-secret',
        hostapps: ['ha_rot'],
        features: { payments: true, event_bridge: false, event_receiver: false },
      },
    ],
  });

  const start = (keys: Partial<Config>, name = 'Shop') =>
    startPlatform({
      registry: registryFrom(file(name)),
      log: pino(
        { level: 'info' },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            logs.push(chunk.toString('utf8'));
            done();
          },
        }),
      ),
      config: {
        port: 0,
        host: '127.0.0.1',
        ...database.config,
        ...(dataDir ? { dataDir } : {}),
        redisUrl: undefined,
        adminToken: ADMIN,
        worker: { pollMs: 250, batchSize: 10, leaseMs: 60_000, enabled: false },
        secretsKey: undefined,
        secretsKeyPrevious: undefined,
        ...keys,
      },
    });
  const stop = async () => {
    await running?.close();
    running = undefined;
  };
  const e1 = (secret: string) =>
    fetch(`${running!.url}/api/v1/orders/create-order-payment/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basicAuthorization('ma_rot', secret) },
      body: JSON.stringify({
        app_id: 'ma_rot',
        client_id: 'ha_rot',
        order: { currency: 'VND', amount: '1000', miniapp_order_id: `ORD-${++orders}` },
      }),
    }).then(async (answer) => (await answer.json()) as { order_payment_id?: string; error_code?: string });
  const dashboard = (method: string, route: string) =>
    fetch(`${running!.url}/api/v1/dashboard/${route}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      ...(method === 'POST' && route.endsWith('credentials') ? { body: JSON.stringify({ kind: 'secret_key' }) } : {}),
    }).then((answer) => answer.json() as Promise<any>);

  beforeAll(async () => {
    await hostapp.start();
    hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_rot_${orders}` })),
    );
    database = await openPlatformDatabase(backend.name);
    // PGlite keeps its data across restarts only in a directory.
    if (backend.name === 'pglite') dataDir = await mkdtemp(path.join(tmpdir(), 'mb-rotation-'));
  }, 60_000);
  afterAll(async () => {
    await stop();
    await hostapp.stop();
    await database?.dispose();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  test('re-sealed under the new key, verifiers kept, audited; the wrong key or the old one alone stops the start', async () => {
    running = await start({ secretsKey: OLD_KEY });
    // A dashboard rotation of the miniapp's key: the file's key revoked, a new one issued.
    const issued = await dashboard('POST', 'miniapps/ma_rot/credentials');
    const listed = await dashboard('GET', 'miniapps/ma_rot/credentials');
    const fileKey = listed.credentials.find((c: { credential_id: string }) => c.credential_id !== issued.credential_id);
    expect((await dashboard('POST', `miniapps/ma_rot/credentials/${fileKey.credential_id}/revoke`)).status).toBe('revoked');
    expect((await e1(issued.secret)).order_payment_id).toBeDefined();
    await stop();
    // A database sealed before the key was recorded: the record is made on the next start.
    await databaseQuery('DELETE FROM secrets_key');

    await expect(start({ secretsKey: NEW_KEY })).rejects.toThrow(/MINIBRIDGE_SECRETS_KEY_PREVIOUS/);
    await expect(start({ secretsKey: NEW_KEY, secretsKeyPrevious: 'dG9vIHNob3J0' })).rejects.toThrow(
      /MINIBRIDGE_SECRETS_KEY_PREVIOUS must be 32 bytes/,
    );

    running = await start({ secretsKey: NEW_KEY, secretsKeyPrevious: OLD_KEY }, 'Shop renamed');
    expect((await e1(issued.secret)).order_payment_id).toBeDefined();
    // Revoked before the rotation, still revoked after it, through a re-import of a changed entry.
    expect((await e1('rotation-miniapp-secret')).error_code).toBe('UNAUTHORIZED');
    // The host app's signing secret, re-sealed, still signs E3.
    const e3 = hostapp.receivedAt('/create-order-payment').at(-1)!;
    expect(
      verifyRequest(
        e3.body,
        signatureInput((name) => e3.headers[name] as string | undefined),
        [SIGNING],
      ),
    ).toMatchObject({ ok: true });
    const audit = await dashboard('GET', 'hostapps/ha_rot/audit');
    expect(audit.entries[0]).toMatchObject({ actor: { type: 'operator' }, action: 'update' });
    expect(audit.entries.some((entry: { changes: { after: string }[] }) => /sealed under secrets key/.test(entry.changes[0]!.after))).toBe(
      true,
    );
    expect(logs.join('')).toMatch(/MINIBRIDGE_SECRETS_KEY rotated/);
    await stop();

    // Nothing is sealed under the old key any more.
    const sealed = await databaseQuery<{ credential_id: string; sealed: string }>(
      'SELECT credential_id::text AS credential_id, sealed FROM partner_credentials WHERE sealed IS NOT NULL',
    );
    expect(sealed.length).toBeGreaterThan(0);
    for (const row of sealed) expect(new SecretBox(OLD_KEY).sealedUnderCurrentKey(row.sealed, row.credential_id)).toBe(false);

    running = await start({ secretsKey: NEW_KEY });
    expect((await e1(issued.secret)).order_payment_id).toBeDefined();
    expect((await e1('rotation-miniapp-secret')).error_code).toBe('UNAUTHORIZED');
    await stop();
    await expect(start({ secretsKey: OLD_KEY })).rejects.toThrow(/did not seal the partner secrets/);
  });

  /** A query on the platform's database while no platform runs. */
  async function databaseQuery<T>(sql: string): Promise<T[]> {
    const { openStore } = await import('../../../src/platform/store/index.js');
    const store = await openStore({
      databaseUrl: database.config.databaseUrl,
      pgliteDataDir: dataDir ?? 'memory://',
      timeouts: database.config.databaseTimeouts,
    });
    try {
      return await store.db.query<T>(sql);
    } finally {
      await store.close();
    }
  }
});
