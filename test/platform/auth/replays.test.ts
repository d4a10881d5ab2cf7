import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { authenticatePartner } from '../../../src/platform/auth/authenticate.js';
import { ApiError } from '../../../src/contract/errors.js';
import { registryFrom, type RegistryFile } from '../../../src/platform/registry/loadRegistry.js';
import { startPlatform, type RunningPlatform } from '../../../src/platform/server.js';
import { openStore } from '../../../src/platform/store/index.js';
import { replayWindowSeconds, signatureInput, signRequest, type SignatureHeaders } from '../../../src/wire/signing.js';
import { describeOnBackends, openPlatformDatabase, type PlatformDatabase } from '../../support/databases.js';
import { PlatformHarness } from '../../support/platformHarness.js';
import { manualClock } from '../../store/fixtures.js';

// Replays the signature checks must refuse (ADR 0038): a message signed with both of a
// rotation's secrets replayed with either signature alone, in either scheme; and a message
// replayed in the last second of the window, alternating between two instances on one database.

const OLD = 'miniapp-signing-secret-old';
const NEW = `whsec_${Buffer.from('miniapp-signing-secret-new-32byt').toString('base64')}`;

/** An E2 for a payment nobody made: past authentication it is ORDER_NOT_FOUND, so any other code is the signature's verdict. */
const e2 = (appId: string, clientId: string) =>
  JSON.stringify({ app_id: appId, client_id: clientId, order_payment_id: 'hop_replay_probe' });

/** The request's headers with only the Standard Webhooks ones, or only the deprecated ones, kept. */
function only(scheme: 'standard' | 'legacy', headers: SignatureHeaders): Record<string, string> {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = headers;
  const { 'X-Minibridge-Timestamp': legacyTimestamp, 'X-Minibridge-Signature': legacySignature } = headers;
  return scheme === 'standard'
    ? { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature }
    : { 'X-Minibridge-Timestamp': legacyTimestamp, 'X-Minibridge-Signature': legacySignature };
}

describeOnBackends('a message signed with both of a rotation’s secrets', (backend) => {
  const harness = new PlatformHarness();
  beforeAll(async () => {
    await harness.start({
      backend: backend.name,
      registry: (registry) => {
        registry.miniapps[0]!.signing = { enabled: true, secrets: [OLD, NEW] };
      },
    });
  }, 60_000);
  afterAll(() => harness.stop());

  const send = (body: string, headers: Record<string, string>) => harness.call('getPaymentStatus', body, { headers });

  test('is accepted once; a copy carrying either signature alone, in either scheme or mixed, is a replay', async () => {
    const body = e2('ma_test', 'ha_test');
    const both = signRequest(body, [OLD, NEW]);
    const [standardOld, standardNew] = both['webhook-signature'].split(' ');
    const [legacyOld, legacyNew] = both['X-Minibridge-Signature'].split(', ');
    expect((await send(body, { ...both })).body.error_code).toBe('ORDER_NOT_FOUND');
    const copies: Record<string, Record<string, string>> = {
      'webhook-signature with the new secret only': { ...only('standard', both), 'webhook-signature': standardNew! },
      'webhook-signature with the old secret only': { ...only('standard', both), 'webhook-signature': standardOld! },
      'the signatures in the other order': { ...both, 'webhook-signature': `${standardNew} ${standardOld}` },
      'X-Minibridge-Signature with the new secret only': { ...only('legacy', both), 'X-Minibridge-Signature': legacyNew! },
      'X-Minibridge-Signature with the old secret only': { ...only('legacy', both), 'X-Minibridge-Signature': legacyOld! },
      'the new standard signature beside the old deprecated one': {
        ...both,
        'webhook-signature': standardNew!,
        'X-Minibridge-Signature': legacyOld!,
      },
    };
    for (const [what, headers] of Object.entries(copies)) {
      const answer = await send(body, headers);
      expect([what, answer.body.error_code, answer.body.error_message]).toEqual([
        what,
        'UNAUTHORIZED',
        expect.stringMatching(/already used/),
      ]);
    }
  });
});

describe('the replay guard and the window agree on the last second', () => {
  test('a signature exactly the window old, replayed in that second, finds its key unexpired (both schemes)', async () => {
    const registry = registryFrom({
      hostapps: [],
      miniapps: [
        {
          app_id: 'ma_unit',
          secret_key: 'unit-secret',
          hostapps: [],
          features: { payments: true, event_bridge: false, event_receiver: false },
          signing: { enabled: true, secrets: [OLD] },
        },
      ],
    });
    const miniapp = registry.miniapp('ma_unit')!;
    const signedAt = 1_700_000_000;
    for (const scheme of ['standard', 'legacy'] as const) {
      const headers = only(scheme, signRequest('{}', [OLD], { nowSeconds: signedAt }));
      const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
      // A guard judging expiry on the clock the window is read from: 500 ms into the window's last second.
      const nowMs = (signedAt + replayWindowSeconds()) * 1000 + 500;
      const kept = new Map<string, number>();
      const guard = async (digest: string, expiresAt: Date) => {
        const known = kept.get(digest);
        if (known !== undefined && known > nowMs) return false;
        kept.set(digest, expiresAt.getTime());
        return true;
      };
      const request = { authorization: undefined, signature: signatureInput((name) => lower[name]), signedBytes: '{}', ip: '203.0.113.9' };
      await authenticatePartner(miniapp, 'basic', request, guard, Math.floor(nowMs / 1000));
      const replay = await authenticatePartner(miniapp, 'basic', request, guard, Math.floor(nowMs / 1000)).catch((error: unknown) => error);
      expect(replay).toBeInstanceOf(ApiError);
      expect((replay as ApiError).message).toMatch(/already used/);
    }
  });
});

const databaseUrl = process.env.DATABASE_URL;

describe.skipIf(!databaseUrl)('the last second of the replay window, on two instances sharing PostgreSQL', () => {
  const MINIAPP = { id: 'ma_edge', secret: 'edge-miniapp-secret' };
  const HOSTAPP = { id: 'ha_edge', secret: 'edge-hostapp-secret' };
  const SIGNING = `whsec_${Buffer.from('edge-signing-secret-of-32-bytes!').toString('base64')}`;
  /** The signing time: a whole second, so the edge can be placed to the millisecond. */
  const SIGNED_AT = 1_800_000_000;
  const clock = manualClock(new Date(SIGNED_AT * 1000));
  let database: PlatformDatabase;
  let instances: RunningPlatform[] = [];

  const registry = (): RegistryFile => ({
    hostapps: [
      {
        client_id: HOSTAPP.id,
        secret_key: HOSTAPP.secret,
        token_prefix: 'Token',
        use_access_token: false,
        payment_status_method: 'POST',
        features: { payments: true, event_bridge: false, event_receiver: false },
      },
    ],
    miniapps: [
      {
        app_id: MINIAPP.id,
        secret_key: MINIAPP.secret,
        hostapps: [HOSTAPP.id],
        features: { payments: true, event_bridge: false, event_receiver: false },
        signing: { enabled: true, secrets: [SIGNING] },
      },
    ],
  });

  beforeAll(async () => {
    database = await openPlatformDatabase('postgres');
    const start = () =>
      startPlatform({
        registry: registryFrom(registry()),
        store: openStore(
          { databaseUrl: database.config.databaseUrl, pgliteDataDir: 'memory://', timeouts: database.config.databaseTimeouts },
          { clock: clock.now },
        ),
        config: {
          port: 0,
          host: '127.0.0.1',
          ...database.config,
          redisUrl: undefined,
          logLevel: 'silent',
          worker: { pollMs: 250, batchSize: 10, leaseMs: 60_000, enabled: false },
        },
      });
    instances = [await start(), await start()];
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(instances.map((instance) => instance.close()));
    await database?.dispose();
  }, 60_000);

  async function send(instance: RunningPlatform, body: string, headers: Record<string, string>) {
    const response = await fetch(`${instance.url}/api/v1/orders/get-payment-status/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return (await response.json()) as { error_code: string; error_message: string };
  }

  /** Moves the shared clock to `ms` after the signing second. */
  const at = (ms: number) => clock.advance(SIGNED_AT * 1000 + ms - clock.now().getTime());
  const window = () => replayWindowSeconds() * 1000;

  for (const scheme of ['standard', 'legacy'] as const) {
    test(`${scheme === 'standard' ? 'Standard Webhooks' : 'X-Minibridge-*'}: a timestamp exactly the window old is accepted once, and its copies alternating between the instances are replays to the window's last millisecond`, async () => {
      const body = e2(MINIAPP.id, HOSTAPP.id);
      const headers = only(scheme, signRequest(body, [SIGNING], { nowSeconds: SIGNED_AT }));
      at(window());
      expect((await send(instances[0]!, body, headers)).error_code).toBe('ORDER_NOT_FOUND');
      const verdicts: string[] = [];
      for (const [index, offset] of [0, 1, 500, 998, 999, 999].entries()) {
        at(window() + offset);
        verdicts.push((await send(instances[(index + 1) % 2]!, body, headers)).error_message);
      }
      expect(verdicts).toEqual(Array(6).fill(expect.stringMatching(/already used/)));
      // One millisecond later the timestamp is stale on either instance: refused as such, never accepted again.
      at(window() + 1000);
      for (const instance of instances)
        expect((await send(instance, body, headers)).error_message).toMatch(new RegExp(`more than ${replayWindowSeconds()} s`));
    });
  }
});
