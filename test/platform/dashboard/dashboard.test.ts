import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Received } from '../../support/fakePartners.js';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { ADMIN_TOKEN, e1Body, HOSTAPP, MINIAPP, PlatformHarness, type PlatformResponse } from '../../support/platformHarness.js';

// The Dashboard API on one instance (ADR 0027): operators manage every partner, a partner only
// itself; rotation with an overlap; changes in force at once; the audit log never holds a secret.

const OTHER_HOSTAPP = { id: 'ha_other', secret: 'other-hostapp-secret' };
const OTHER_MINIAPP = { id: 'ma_other', secret: 'other-miniapp-secret' };
/** The miniapp whose secret the rotation test revokes: the others keep theirs, whatever order the tests run in. */
const ROTATING = { id: 'ma_rotating', secret: 'rotating-miniapp-secret' };
const operator = `Bearer ${ADMIN_TOKEN}`;

const harness = new PlatformHarness();
let e3Count = 0;

beforeAll(async () => {
  harness.hostapp.on('/create-order-payment', (_request: Received, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ order_payment_id: `hop_dash_${++e3Count}` }));
  });
  await harness.start({
    registry: (registry) => {
      registry.hostapps.push({
        client_id: OTHER_HOSTAPP.id,
        secret_key: OTHER_HOSTAPP.secret,
        token_prefix: 'Token',
        use_access_token: false,
        payment_status_method: 'POST',
        features: { payments: true, event_bridge: false, event_receiver: false },
      });
      registry.miniapps.push({
        app_id: OTHER_MINIAPP.id,
        secret_key: OTHER_MINIAPP.secret,
        hostapps: [OTHER_HOSTAPP.id],
        features: { payments: true, event_bridge: false, event_receiver: false },
      });
      registry.miniapps.push({
        app_id: ROTATING.id,
        secret_key: ROTATING.secret,
        hostapps: [HOSTAPP.id],
        features: { payments: true, event_bridge: false, event_receiver: false },
      });
    },
  });
}, 120_000);

afterAll(async () => {
  await harness.stop();
});

type PartnerRef = { type: 'hostapps' | 'miniapps'; id: string };

/** Every dashboard operation aimed at `target`, as [operationId, path, body]. */
function operationsOn(target: PartnerRef): [string, string, object | undefined][] {
  const base = `/api/v1/dashboard/${target.type}/${target.id}`;
  const settings = target.type === 'hostapps' ? 'getHostapp' : 'getMiniapp';
  const update = target.type === 'hostapps' ? 'updateHostapp' : 'updateMiniapp';
  return [
    [settings, base, undefined],
    [update, base, { name: 'Taken over' }],
    ['listCredentials', `${base}/credentials`, undefined],
    ['issueCredential', `${base}/credentials`, { kind: 'secret_key' }],
    ['revokeCredential', `${base}/credentials/5d1f0a4e-2b7c-4e8a-9c3d-6f2a1b0e9d87/revoke`, undefined],
    ['listPartnerDeliveries', `${base}/deliveries`, undefined],
    ['redeliverPartnerDelivery', `${base}/deliveries/0b6e2f1c-8a43-4c55-9a7e-3f0e6f1c2d9b/redeliver`, undefined],
    ['listAuditEntries', `${base}/audit`, undefined],
    ['listPartnerPayments', `${base}/payments`, undefined],
    ['getPartnerPayment', `${base}/payments/${HOSTAPP.id}/hop_dash_1`, undefined],
  ];
}

const partners: Record<string, { ref: PartnerRef; auth: string }> = {
  hostapp: { ref: { type: 'hostapps', id: HOSTAPP.id }, auth: basicAuthorization(HOSTAPP.id, HOSTAPP.secret) },
  miniapp: { ref: { type: 'miniapps', id: MINIAPP.id }, auth: basicAuthorization(MINIAPP.id, MINIAPP.secret) },
  otherHostapp: { ref: { type: 'hostapps', id: OTHER_HOSTAPP.id }, auth: basicAuthorization(OTHER_HOSTAPP.id, OTHER_HOSTAPP.secret) },
  otherMiniapp: { ref: { type: 'miniapps', id: OTHER_MINIAPP.id }, auth: basicAuthorization(OTHER_MINIAPP.id, OTHER_MINIAPP.secret) },
};

async function settingsOf(ref: PartnerRef): Promise<string> {
  const op = ref.type === 'hostapps' ? 'getHostapp' : 'getMiniapp';
  const answer = await harness.call(op, undefined, { authorization: operator, path: `/api/v1/dashboard/${ref.type}/${ref.id}` });
  expect(answer.status).toBe(200);
  const credentials = await harness.call('listCredentials', undefined, {
    authorization: operator,
    path: `/api/v1/dashboard/${ref.type}/${ref.id}/credentials`,
  });
  return JSON.stringify([answer.body, credentials.body]);
}

describe('who may do what', () => {
  // Both directions, across kinds too: each partner against each other partner.
  const pairs = Object.entries(partners).flatMap(([actor, a]) =>
    Object.entries(partners)
      .filter(([target]) => target !== actor)
      .map(([target, t]) => [actor, target, a, t] as const),
  );
  test.each(pairs)('%s cannot read or change %s through any dashboard operation', async (_actor, _target, actor, target) => {
    const before = await settingsOf(target.ref);
    for (const [operationId, path, body] of operationsOn(target.ref)) {
      const answer = await harness.call(operationId, body, { authorization: actor.auth, path });
      expect(answer.status, `${operationId} ${path}`).toBe(404);
      expect(answer.body.error_code).toBe('NOT_FOUND');
    }
    expect(await settingsOf(target.ref)).toBe(before);
  });

  test('a partner lists only itself; an operator lists everyone', async () => {
    const asHostapp = await harness.call('listHostapps', undefined, { authorization: partners.hostapp!.auth });
    expect(asHostapp.body.hostapps.map((h: { client_id: string }) => h.client_id)).toEqual([HOSTAPP.id]);
    const asMiniapp = await harness.call('listHostapps', undefined, { authorization: partners.miniapp!.auth });
    expect(asMiniapp.body.hostapps).toEqual([]);
    const miniapps = await harness.call('listMiniapps', undefined, { authorization: partners.otherMiniapp!.auth });
    expect(miniapps.body.miniapps.map((m: { app_id: string }) => m.app_id)).toEqual([OTHER_MINIAPP.id]);
    const all = await harness.call('listHostapps', undefined, { authorization: operator });
    // Everyone is every host app the database holds (other tests may have created some), in order.
    const everyone = await harness.running.platform.store.db.query<{ partner_id: string }>(
      "SELECT partner_id FROM partners WHERE partner_type = 'hostapp'",
    );
    expect(everyone.map((row) => row.partner_id)).toEqual(expect.arrayContaining([OTHER_HOSTAPP.id, HOSTAPP.id]));
    expect(all.body.hostapps.map((h: { client_id: string }) => h.client_id)).toEqual(everyone.map((row) => row.partner_id).sort());
  });

  test('operator-only operations refuse partners; wrong credentials are refused', async () => {
    const create = await harness.call('createHostapp', { client_id: 'ha_new', name: 'New' }, { authorization: partners.hostapp!.auth });
    expect(create.status).toBe(401);
    const relink = await harness.call(
      'updateMiniapp',
      { hostapps: [HOSTAPP.id, OTHER_HOSTAPP.id] },
      { authorization: partners.miniapp!.auth, path: `/api/v1/dashboard/miniapps/${MINIAPP.id}` },
    );
    expect(relink.status).toBe(401);
    const wrong = await harness.call('listHostapps', undefined, { authorization: basicAuthorization(HOSTAPP.id, 'not-the-secret') });
    expect(wrong.status).toBe(401);
    const none = await harness.call('listHostapps', undefined, {});
    expect(none.status).toBe(401);
  });
});

describe('operators', () => {
  /** A host app the operator creates, answering E3 from the test's host app server. */
  const createHostapp = (clientId: string): Promise<PlatformResponse> =>
    harness.call(
      'createHostapp',
      {
        client_id: clientId,
        name: 'Created',
        urls: { create_order_payment: `${harness.hostapp.url}/create-order-payment` },
        features: { payments: true },
      },
      { authorization: operator },
    );

  test('create a host app: its secret is shown once and signs it in', async () => {
    const created = await createHostapp('ha_created');
    expect(created.status).toBe(201);
    const secret: string = created.body.credential.secret;
    const own = await harness.call('getHostapp', undefined, {
      authorization: basicAuthorization('ha_created', secret),
      path: '/api/v1/dashboard/hostapps/ha_created',
    });
    expect(own.status).toBe(200);
    expect(own.text).not.toContain(secret);
    const again = await harness.call('createHostapp', { client_id: 'ha_created', name: 'Again' }, { authorization: operator });
    expect(again.status).toBe(409);
    expect(again.body.error_code).toBe('CONFLICT');
  });

  test('create a miniapp linked to a created host app, then E1 through them works at once', async () => {
    expect((await createHostapp('ha_created_linked')).status).toBe(201);
    const miniapp = await harness.call(
      'createMiniapp',
      { app_id: 'ma_created', name: 'Created', hostapps: ['ha_created_linked'], features: { payments: true } },
      { authorization: operator },
    );
    expect(miniapp.status).toBe(201);
    const e1 = await harness.call(
      'createOrderPayment',
      { ...e1Body(), app_id: 'ma_created', client_id: 'ha_created_linked' },
      {
        authorization: basicAuthorization('ma_created', miniapp.body.credential.secret),
      },
    );
    expect(e1.status).toBe(200);
    const unknown = await harness.call(
      'createMiniapp',
      { app_id: 'ma_x', name: 'X', hostapps: ['ha_nowhere'] },
      { authorization: operator },
    );
    expect(unknown.body.error_code).toBe('CONFLICT');
  });

  test('contract limits are enforced on dashboard input', async () => {
    const longName = await harness.call('createHostapp', { client_id: 'ha_long', name: 'x'.repeat(201) }, { authorization: operator });
    expect(longName.status).toBe(400);
    const badUrl = await harness.call(
      'updateHostapp',
      { urls: { create_order_payment: 'ftp://example.com/x' } },
      { authorization: operator, path: `/api/v1/dashboard/hostapps/${HOSTAPP.id}` },
    );
    expect(badUrl.status).toBe(400);
    const unknownMember = await harness.call(
      'updateHostapp',
      { secret_key: 'x' },
      {
        authorization: operator,
        path: `/api/v1/dashboard/hostapps/${HOSTAPP.id}`,
      },
    );
    expect(unknownMember.status).toBe(400);
  });
});

describe('payments: a partner sees only its own (ADR 0039)', () => {
  let own: string;
  beforeAll(async () => {
    const e1 = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(e1.status).toBe(200);
    own = e1.body.order_payment_id;
  });

  test('another partner naming the payment on its own path gets a 404 worded like a missing one', async () => {
    for (const other of [partners.otherHostapp!, partners.otherMiniapp!]) {
      const base = `/api/v1/dashboard/${other.ref.type}/${other.ref.id}/payments/${HOSTAPP.id}`;
      const named = await harness.call('getPartnerPayment', undefined, { authorization: other.auth, path: `${base}/${own}` });
      const missing = await harness.call('getPartnerPayment', undefined, { authorization: other.auth, path: `${base}/hop_never` });
      expect(named.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(named.body.error_code).toBe('NOT_FOUND');
      expect(named.body.error_message.replace(own, 'ID')).toBe(missing.body.error_message.replace('hop_never', 'ID'));
      const listed = await harness.call('listPartnerPayments', undefined, {
        authorization: other.auth,
        path: `/api/v1/dashboard/${other.ref.type}/${other.ref.id}/payments`,
      });
      expect(listed.status).toBe(200);
      expect(listed.text).not.toContain(own);
    }
    for (const side of [partners.hostapp!, partners.miniapp!]) {
      const path = `/api/v1/dashboard/${side.ref.type}/${side.ref.id}/payments/${HOSTAPP.id}/${own}`;
      const opened = await harness.call('getPartnerPayment', undefined, { authorization: side.auth, path });
      expect(opened.status).toBe(200);
      expect(opened.body.order_payment_id).toBe(own);
    }
  });

  // Instants the date-time format admits or nearly admits but no database keeps: always 400, never 500 or 503.
  test.each([
    ['a leap second', 'created_from=2016-12-31T23:59:60Z'],
    ['a leap second as the upper bound', 'created_to=2016-12-31T23:59:60Z'],
    ['year 0', 'created_from=0000-01-01T00:00:00Z'],
    ['year 0 as the upper bound', 'created_to=0000-01-01T00:00:00Z'],
    ['30 February', 'created_from=2024-02-30T00:00:00Z'],
    [
      'a cursor naming a leap second',
      `cursor=${Buffer.from(JSON.stringify(['2016-12-31T23:59:60.000Z', 'ha_test', 'x'])).toString('base64url')}`,
    ],
    ['a cursor naming year 0', `cursor=${Buffer.from(JSON.stringify(['0000-01-01T00:00:00.000Z', 'ha_test', 'x'])).toString('base64url')}`],
    [
      'a cursor naming 30 February',
      `cursor=${Buffer.from(JSON.stringify(['2024-02-30T00:00:00.000Z', 'ha_test', 'x'])).toString('base64url')}`,
    ],
  ])('%s is refused with 400 INVALID_REQUEST', async (_name, query) => {
    for (const [operationId, path, authorization] of [
      ['listPartnerPayments', `/api/v1/dashboard/hostapps/${HOSTAPP.id}/payments?${query}`, partners.hostapp!.auth],
      ['listPayments', `/api/v1/dashboard/payments?${query}`, operator],
    ] as const) {
      const answer = await harness.call(operationId, undefined, { authorization, path });
      expect(answer.status, `${operationId} ${query}`).toBe(400);
      expect(answer.body.error_code).toBe('INVALID_REQUEST');
    }
  });
});

describe('partners manage themselves', () => {
  test('a feature switched off is refused on the next request, and the audit log says who changed it', async () => {
    const path = `/api/v1/dashboard/miniapps/${MINIAPP.id}`;
    const off = await harness.call('updateMiniapp', { features: { payments: false } }, { authorization: partners.miniapp!.auth, path });
    expect(off.status).toBe(200);
    expect(off.body.features.payments).toBe(false);
    const e1 = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(e1.body.error_code).toBe('PAYMENT_DISABLED');
    await harness.call('updateMiniapp', { features: { payments: true } }, { authorization: partners.miniapp!.auth, path });
    const audit = await harness.call('listAuditEntries', undefined, { authorization: partners.miniapp!.auth, path: `${path}/audit` });
    const change = audit.body.entries.find((entry: { action: string }) => entry.action === 'update');
    expect(change.actor).toEqual({ type: 'miniapp', id: MINIAPP.id });
    expect(change.changes).toEqual([{ field: 'features.payments', before: 'false', after: 'true' }]);
  });

  test('the audit log is newest first with two actors interleaved, never grouped by actor', async () => {
    const path = `/api/v1/dashboard/miniapps/${OTHER_MINIAPP.id}`;
    const actors = [partners.otherMiniapp!.auth, operator, partners.otherMiniapp!.auth, operator, partners.otherMiniapp!.auth];
    const names = actors.map((_, i) => `Interleaved ${i}`);
    for (const [i, authorization] of actors.entries()) {
      const answer = await harness.call('updateMiniapp', { name: names[i] }, { authorization, path });
      expect(answer.status).toBe(200);
    }
    const audit = await harness.call('listAuditEntries', undefined, { authorization: operator, path: `${path}/audit?limit=5` });
    expect(audit.status).toBe(200);
    const entries: { actor: { type: string }; at: string; changes: { after: string }[] }[] = audit.body.entries;
    expect(entries.map((entry) => JSON.parse(entry.changes[0]!.after) as string)).toEqual([...names].reverse());
    expect(entries.map((entry) => entry.actor.type)).toEqual(['miniapp', 'operator', 'miniapp', 'operator', 'miniapp']);
    const times = entries.map((entry) => entry.at);
    expect(times).toEqual([...times].sort().reverse());
  });

  test('rotation: both secrets work during the overlap, the old one is refused once revoked; no secret in the audit log', async () => {
    const base = `/api/v1/dashboard/miniapps/${ROTATING.id}`;
    const auth = (secret: string) => basicAuthorization(ROTATING.id, secret);
    const e1 = () => ({ ...e1Body(), app_id: ROTATING.id });
    const issued = await harness.call(
      'issueCredential',
      { kind: 'secret_key' },
      { authorization: auth(ROTATING.secret), path: `${base}/credentials` },
    );
    expect(issued.status).toBe(201);
    const fresh: string = issued.body.secret;
    for (const secret of [ROTATING.secret, fresh]) {
      const created = await harness.call('createOrderPayment', e1(), { authorization: auth(secret) });
      expect(created.status, secret === fresh ? 'new secret' : 'old secret').toBe(200);
    }
    const third = await harness.call(
      'issueCredential',
      { kind: 'secret_key' },
      { authorization: auth(fresh), path: `${base}/credentials` },
    );
    expect(third.body.error_code).toBe('CONFLICT');
    const listed = await harness.call('listCredentials', undefined, {
      authorization: auth(fresh),
      path: `${base}/credentials`,
    });
    expect(listed.text).not.toContain(fresh);
    const old = listed.body.credentials.find((c: { credential_id: string }) => c.credential_id !== issued.body.credential_id);
    const revoked = await harness.call('revokeCredential', undefined, {
      authorization: auth(fresh),
      path: `${base}/credentials/${old.credential_id}/revoke`,
    });
    expect(revoked.body.status).toBe('revoked');
    const refused = await harness.call('createOrderPayment', e1(), { authorization: auth(ROTATING.secret) });
    expect(refused.body.error_code).toBe('UNAUTHORIZED');
    const accepted = await harness.call('createOrderPayment', e1(), { authorization: auth(fresh) });
    expect(accepted.status).toBe(200);
    const last = await harness.call('revokeCredential', undefined, {
      authorization: auth(fresh),
      path: `${base}/credentials/${issued.body.credential_id}/revoke`,
    });
    expect(last.body.error_code).toBe('CONFLICT');
    const audit = await harness.call('listAuditEntries', undefined, { authorization: auth(fresh), path: `${base}/audit` });
    expect(audit.body.entries.map((entry: { action: string }) => entry.action)).toEqual(
      expect.arrayContaining(['issue_credential', 'revoke_credential']),
    );
    expect(audit.text).not.toContain(fresh);
    expect(audit.text).not.toContain(ROTATING.secret);
  });

  test('secrets at rest: sealed and verified, never stored in the clear', async () => {
    const rows = await harness.running.platform.store.db.query<{ verifier: string; sealed: string | null }>(
      'SELECT verifier, sealed FROM partner_credentials',
    );
    expect(rows.length).toBeGreaterThan(4);
    const text = JSON.stringify(rows);
    for (const secret of [HOSTAPP.secret, MINIAPP.secret, OTHER_HOSTAPP.secret, OTHER_MINIAPP.secret, ROTATING.secret])
      expect(text).not.toContain(secret);
    expect(rows.filter((row) => row.sealed !== null).every((row) => row.sealed!.startsWith('v1.'))).toBe(true);
  });
});
