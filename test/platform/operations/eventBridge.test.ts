import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { describeOnBackends } from '../../support/databases.js';
import { HOSTAPP, MINIAPP, PlatformHarness } from '../../support/platformHarness.js';

/** The event bridge (ADR 0009) against what a misbehaving sender or recipient can do. */
describeOnBackends('event bridge', (backend) => {
  const harness = new PlatformHarness();

  beforeAll(async () => {
    harness.hostapp.on('/events', { host_received: true });
    harness.miniapp.on('/events', { miniapp_received: true });
    await harness.start({ backend: backend.name });
  }, 60_000);
  afterAll(() => harness.stop());

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
