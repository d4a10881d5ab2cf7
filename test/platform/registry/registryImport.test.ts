/**
 * A registry re-import after dashboard changes to credentials (ADR 0038): a revoked credential
 * is never made active again, what the dashboard issued is never revoked by an import, and every
 * credential change an import makes (or declines to make) is in the audit log.
 */
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { registryFrom, type RegistryFile } from '../../../src/platform/registry/loadRegistry.js';
import { defaultMigrationsDir, migrate } from '../../../src/platform/store/migrate.js';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { backends, describeOnBackends, openTimeoutMs, type TestDatabase } from '../../support/databases.js';
import type { Received } from '../../support/fakePartners.js';
import { ADMIN_TOKEN, e1Body, PlatformHarness } from '../../support/platformHarness.js';

const operator = `Bearer ${ADMIN_TOKEN}`;
const SIGNING = `whsec_${Buffer.from('registry-import-signing-secret!!').toString('base64')}`;

describeOnBackends('registry re-import after dashboard changes', (backend) => {
  const harness = new PlatformHarness();
  /** The file as the platform started from it; each test adds a miniapp of its own to a copy. */
  let started: RegistryFile;
  let orders = 0;

  beforeAll(async () => {
    harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_import_${++orders}` }));
    });
    await harness.start({
      backend: backend.name,
      registry: (registry) => {
        started = structuredClone(registry);
      },
    });
  }, 120_000);
  afterAll(() => harness.stop());

  /**
   * A miniapp named "Shop" that only this test's file entry and dashboard calls change, imported
   * from a file of its own: the registered partners and the other tests' miniapps are untouched.
   */
  async function importedShop(appId: string) {
    const file = structuredClone(started);
    const entry = { ...structuredClone(file.miniapps[0]!), app_id: appId, name: 'Shop', secret_key: `${appId}-secret` };
    file.miniapps = [entry];
    expect(await harness.running.platform.partners!.importRegistry(registryFrom(structuredClone(file)))).toEqual({
      created: 1,
      updated: 0,
    });
    const credentialsPath = `/api/v1/dashboard/miniapps/${appId}/credentials`;
    return {
      secret: entry.secret_key,
      credentialsPath,
      miniappPath: `/api/v1/dashboard/miniapps/${appId}`,
      reimport: (change: (entry: RegistryFile['miniapps'][number]) => void) => {
        change(entry);
        return harness.running.platform.partners!.importRegistry(registryFrom(structuredClone(file)));
      },
      e1: (secret: string) =>
        harness.call('createOrderPayment', { ...e1Body(), app_id: appId }, { authorization: basicAuthorization(appId, secret) }),
      credentials: async () =>
        (await harness.call('listCredentials', undefined, { authorization: operator, path: credentialsPath })).body.credentials as {
          credential_id: string;
          kind: string;
          status: string;
        }[],
      lastImportAudit: async () => {
        const audit = await harness.call('listAuditEntries', undefined, {
          authorization: operator,
          path: `/api/v1/dashboard/miniapps/${appId}/audit?limit=5`,
        });
        return audit.body.entries.find((entry: { actor: { type: string } }) => entry.actor.type === 'import');
      },
    };
  }

  test('after a dashboard rotation, re-importing a changed name keeps the old key revoked and the new one active, and audits both', async () => {
    const { secret, credentialsPath, reimport, e1, credentials, lastImportAudit } = await importedShop('ma_import_rotated');
    const [original] = (await credentials()).filter((c) => c.kind === 'secret_key');
    const issued = await harness.call('issueCredential', { kind: 'secret_key' }, { authorization: operator, path: credentialsPath });
    expect(issued.status).toBe(201);
    const revoke = await harness.call('revokeCredential', undefined, {
      authorization: operator,
      path: `${credentialsPath}/${original!.credential_id}/revoke`,
    });
    expect(revoke.body.status).toBe('revoked');

    expect(await reimport((entry) => (entry.name = 'Shop, renamed'))).toEqual({ created: 0, updated: 1 });
    expect((await e1(secret)).body.error_code).toBe('UNAUTHORIZED');
    expect((await e1(issued.body.secret)).status).toBe(200);
    const after = await credentials();
    expect(after.find((c) => c.credential_id === original!.credential_id)?.status).toBe('revoked');
    expect(after.find((c) => c.credential_id === issued.body.credential_id)?.status).toBe('active');
    const audit = await lastImportAudit();
    expect(audit.changes).toEqual(
      expect.arrayContaining([
        { field: 'name', before: '"Shop"', after: '"Shop, renamed"' },
        { field: `credential.${original!.credential_id}`, before: '"revoked"', after: expect.stringMatching(/never restored/) },
      ]),
    );
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  test('a new secret in the file is added and the one the file brought before is revoked; the dashboard’s key stays; each is audited', async () => {
    const { credentialsPath, reimport, e1, credentials, lastImportAudit } = await importedShop('ma_import_moving');
    // The dashboard's key: a rotation, the file's first key revoked.
    const [original] = (await credentials()).filter((c) => c.kind === 'secret_key');
    expect((await harness.call('issueCredential', { kind: 'secret_key' }, { authorization: operator, path: credentialsPath })).status).toBe(
      201,
    );
    await harness.call('revokeCredential', undefined, {
      authorization: operator,
      path: `${credentialsPath}/${original!.credential_id}/revoke`,
    });
    const before = (await credentials()).filter((c) => c.kind === 'secret_key' && c.status === 'active');
    expect(before).toHaveLength(1);
    expect(await reimport((entry) => (entry.secret_key = 'registry-secret-two'))).toEqual({ created: 0, updated: 1 });
    expect((await e1('registry-secret-two')).status).toBe(200);
    const active = (await credentials()).filter((c) => c.kind === 'secret_key' && c.status === 'active');
    expect(active.map((c) => c.credential_id)).toEqual(expect.arrayContaining([before[0]!.credential_id]));
    expect(active).toHaveLength(2);
    const added = active.find((c) => c.credential_id !== before[0]!.credential_id)!;
    expect((await lastImportAudit()).changes).toEqual(
      expect.arrayContaining([{ field: `credential.${added.credential_id}`, before: null, after: '"active secret_key"' }]),
    );

    // The file moves on again: what its previous import brought is revoked, audited; the dashboard's key is not.
    expect(await reimport((entry) => (entry.secret_key = 'registry-secret-three'))).toEqual({ created: 0, updated: 1 });
    expect((await e1('registry-secret-two')).body.error_code).toBe('UNAUTHORIZED');
    expect((await e1('registry-secret-three')).status).toBe(200);
    const now = await credentials();
    expect(now.find((c) => c.credential_id === before[0]!.credential_id)?.status).toBe('active');
    expect(now.find((c) => c.credential_id === added.credential_id)?.status).toBe('revoked');
    expect((await lastImportAudit()).changes).toEqual(
      expect.arrayContaining([{ field: `credential.${added.credential_id}`, before: '"active secret_key"', after: '"revoked"' }]),
    );
  });

  test('signing: a revoked signing secret is not restored, and an entry that could only enable signing with revoked secrets is not imported', async () => {
    const { credentialsPath, miniappPath, reimport, credentials } = await importedShop('ma_import_signing');
    expect(await reimport((entry) => (entry.signing = { enabled: true, secrets: [SIGNING] }))).toEqual({ created: 0, updated: 1 });
    const signingSecret = (await credentials()).find((c) => c.kind === 'signing_secret' && c.status === 'active')!;
    // The partner turns signing off and retires the secret in the dashboard.
    expect(
      (await harness.call('updateMiniapp', { signing: { enabled: false } }, { authorization: operator, path: miniappPath })).status,
    ).toBe(200);
    await harness.call('revokeCredential', undefined, {
      authorization: operator,
      path: `${credentialsPath}/${signingSecret.credential_id}/revoke`,
    });
    // The file, still naming only that secret with signing on, changes its name: importing it
    // would leave signing on with no secret to check, so the entry is left as it stands.
    expect(await reimport((entry) => (entry.name = 'Shop, signed'))).toEqual({ created: 0, updated: 0 });
    const miniapp = await harness.call('getMiniapp', undefined, { authorization: operator, path: miniappPath });
    expect([miniapp.body.name, miniapp.body.signing]).toEqual(['Shop', { enabled: false }]);
    expect((await credentials()).find((c) => c.credential_id === signingSecret.credential_id)?.status).toBe('revoked');
  });
});

describe('credential origins of databases from before the column', () => {
  for (const backend of backends)
    describe.skipIf(backend.skip)(backend.name, { timeout: openTimeoutMs }, () => {
      let database: TestDatabase | undefined;
      let before: string | undefined;
      afterEach(async () => {
        await database?.dispose();
        if (before) await rm(before, { recursive: true, force: true });
      }, openTimeoutMs);

      test('dashboard-issued credentials are told from imported ones by the audit log', async () => {
        database = await backend.open({ migrate: false });
        before = await mkdtemp(path.join(tmpdir(), 'mb-migrations-'));
        for (const name of await readdir(defaultMigrationsDir))
          if (name < '038') await copyFile(path.join(defaultMigrationsDir, name), path.join(before, name));
        await migrate(database.db, before);
        const credential = (id: string) =>
          database!.db.query(
            `INSERT INTO partner_credentials (credential_id, partner_type, partner_id, kind, verifier, created_at)
             VALUES ($1, 'miniapp', 'ma_old', 'secret_key', 'v', now())`,
            [id],
          );
        const audit = (actor: string, action: string, id: string) =>
          database!.db.query(
            `INSERT INTO audit_entries (audit_id, at, actor_type, actor_id, action, partner_type, partner_id, changes)
             VALUES (gen_random_uuid(), now(), $1, NULL, $2, 'miniapps', 'ma_old', $3)`,
            [actor, action, JSON.stringify([{ field: `credential.${id}`, before: null, after: '"active secret_key"' }])],
          );
        const [imported, issued, created] = [
          '11111111-1111-4111-8111-111111111111',
          '22222222-2222-4222-8222-222222222222',
          '33333333-3333-4333-8333-333333333333',
        ];
        for (const id of [imported, issued, created]) await credential(id);
        await audit('operator', 'issue_credential', issued);
        await audit('operator', 'create', created);
        await migrate(database.db);
        const rows = await database.db.query<{ credential_id: string; origin: string }>(
          'SELECT credential_id::text AS credential_id, origin FROM partner_credentials ORDER BY credential_id',
        );
        expect(rows).toEqual([
          { credential_id: imported, origin: 'import' },
          { credential_id: issued, origin: 'dashboard' },
          { credential_id: created, origin: 'dashboard' },
        ]);
      });
    });
});
