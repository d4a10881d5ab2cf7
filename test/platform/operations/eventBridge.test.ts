import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { describeOnBackends, openPlatformDatabase, type PlatformDatabase } from '../../support/databases.js';
import { HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';
import { TcpProxy } from '../../support/tcpProxy.js';

/** The event bridge (ADR 0009) against what a misbehaving sender or recipient can do. */
describeOnBackends('event bridge', (backend) => {
  const harness = new PlatformHarness();
  const features = { payments: false, event_bridge: true, event_receiver: true };

  beforeAll(async () => {
    harness.hostapp.on('/events', { host_received: true });
    harness.miniapp.on('/events', { miniapp_received: true });
    await harness.start({
      backend: backend.name,
      registry: (registry) => {
        // The receiver switched on, its URL never registered.
        registry.miniapps.push({ app_id: 'ma_nourl', secret_key: 'nourl-secret-1', hostapps: [HOSTAPP.id], features, urls: {} });
        registry.hostapps.push({
          client_id: 'ha_nourl',
          secret_key: 'hostapp-nourl-secret',
          token_prefix: 'Token',
          use_access_token: false,
          payment_status_method: 'POST',
          features,
          urls: {},
        });
        registry.miniapps[0]!.hostapps.push('ha_nourl');
      },
    });
  }, 60_000);
  afterAll(() => harness.stop());

  describe('a recipient that has not registered its receiver URL', () => {
    test('E8 is refused with 403 EVENT_RECEIVER_DISABLED, not 502 (nothing to retry)', async () => {
      const response = await harness.call(
        'sendHostappEvent',
        { app_id: 'ma_nourl', client_id: HOSTAPP.id, event_type: 'x', external_event_id: 'nourl-1', payload: {} },
        { authorization: harness.hostappToken() },
      );
      expect([response.status, response.body.error_code]).toEqual([403, 'EVENT_RECEIVER_DISABLED']);
    });

    test('the miniapp operation is refused with 403 EVENT_RECEIVER_DISABLED, not 502', async () => {
      const response = await harness.call(
        'sendMiniappEvent',
        { app_id: MINIAPP.id, client_id: 'ha_nourl', event_type: 'x', payload: {} },
        { authorization: harness.miniappAuth() },
      );
      expect([response.status, response.body.error_code]).toEqual([403, 'EVENT_RECEIVER_DISABLED']);
    });
  });

  describe('payload shapes within the inbound limits', () => {
    test('a payload holding a long array (within 1 MiB) is forwarded, not a platform failure', async () => {
      // 500,000 items, about 1 MB: inside x-max-body-bytes (1 MiB) and two levels deep.
      const items = new Array(500_000).fill('0').join(',');
      const body = `{"app_id":"${MINIAPP.id}","client_id":"${HOSTAPP.id}","event_type":"bulk","payload":{"items":[${items}]}}`;
      const before = harness.miniapp.receivedAt('/events').length;
      const response = await harness.call('sendHostappEvent', body, { authorization: harness.hostappToken() });
      expect([response.status, response.text]).toEqual([200, '{"miniapp_received":true}']);
      expect(harness.miniapp.receivedAt('/events').length).toBe(before + 1);
      const logged = await harness.running.platform.store.eventLog.findByEventId(response.headers.get('x-minibridge-event-id')!);
      expect(logged.map((entry) => entry.outcome)).toEqual(['delivered']);
    });

    test('the same from a miniapp', async () => {
      const items = new Array(500_000).fill('0').join(',');
      const body = `{"app_id":"${MINIAPP.id}","client_id":"${HOSTAPP.id}","event_type":"bulk","payload":{"items":[${items}]}}`;
      const response = await harness.call('sendMiniappEvent', body, { authorization: basicAuthorization(MINIAPP.id, MINIAPP.secret) });
      expect([response.status, response.text]).toEqual([200, '{"host_received":true}']);
    });
  });

  // A real outage: the platform reaches PostgreSQL through a proxy the test cuts (ADR 0037).
  describe.skipIf(backend.name !== 'postgres')('while the database is down', () => {
    const cutOff = new PlatformHarness();
    let database: PlatformDatabase;
    let proxy: TcpProxy;

    beforeAll(async () => {
      database = await openPlatformDatabase('postgres');
      const direct = new URL(database.config.databaseUrl!);
      proxy = new TcpProxy(direct.hostname, Number(direct.port || 5432));
      const proxied = new URL(direct);
      proxied.host = `127.0.0.1:${await proxy.start()}`;
      cutOff.miniapp.on('/events', { miniapp_received: true });
      await cutOff.start({ backend: backend.name, config: { databaseUrl: proxied.toString() } });
    }, 60_000);
    afterAll(async () => {
      proxy.restore();
      await cutOff.stop();
      await proxy.stop();
      await database.dispose();
    }, 60_000);

    test('an event is not sent to a receiver when it cannot be logged: 503 before delivery, so a retry is not a second event', async () => {
      const { availability } = cutOff.running.platform.store.db;
      proxy.cut('reset');
      // The next statement fails and the probe finds the database gone (no timing is asserted).
      await cutOff.running.platform.store.db.query('SELECT 1').catch(() => undefined);
      await cutOff.eventually('the outage seen', () => !availability.up);

      // No external_event_id: each send is a new event to the receiver, which cannot tell a retry.
      const event = { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'x', payload: { n: 1 } };
      const refused = await cutOff.call('sendHostappEvent', event, { authorization: cutOff.hostappToken() });
      expect([refused.status, refused.body.error_code]).toEqual([503, 'UNKNOWN_ERROR']);
      expect(cutOff.miniapp.receivedAt('/events')).toEqual([]);

      proxy.restore();
      await cutOff.eventually('the database back', () => availability.up, 20_000);
      const sent = await cutOff.call('sendHostappEvent', event, { authorization: cutOff.hostappToken() });
      expect([sent.status, sent.text]).toEqual([200, '{"miniapp_received":true}']);
      expect(cutOff.miniapp.receivedAt('/events')).toHaveLength(1);
    }, 60_000);
  });
});
