import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { describeOnBackends } from '../../support/databases.js';
import { HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

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
});
