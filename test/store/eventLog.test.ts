import { beforeEach, expect, it } from 'vitest';
import { createStore, type EventLogEntry, type Store } from '../../src/platform/store/index.js';
import { describeEachBackend } from '../support/databases.js';
import { manualClock, seconds } from './fixtures.js';

const delivered: EventLogEntry = {
  event_id: 'evt_abc',
  direction: 'miniapp_to_hostapp',
  app_id: 'ma_shop',
  client_id: 'ha_superapp',
  event_type: 'order_status_update',
  external_event_id: 'ext-1',
  payload: '{"order_payment_id":"hop_1","fulfillment_status":"shipped","weight":12345678901234567890.5}',
  outcome: 'delivered',
  error_code: null,
  receiver_http_status: 200,
  receiver_response: '{"ok":true,"n":0.10}',
  duration_ms: 42,
};

describeEachBackend('event log', (database) => {
  let store: Store;
  const clock = manualClock();

  beforeEach(() => {
    store = createStore(database.db, { clock: clock.now });
  });

  it('appends every handling of an event, payload and response as exact text', async () => {
    const firstAt = clock.now().toISOString();
    await store.eventLog.record({
      ...delivered,
      outcome: 'failed',
      error_code: 'EVENT_DELIVERY_FAILED',
      receiver_http_status: 503,
      receiver_response: null,
    });
    clock.advance(seconds(10));
    await store.eventLog.record(delivered);
    await store.eventLog.record({ ...delivered, event_id: 'evt_other' });

    expect(await store.eventLog.findByEventId('evt_abc')).toEqual([
      {
        ...delivered,
        outcome: 'failed',
        error_code: 'EVENT_DELIVERY_FAILED',
        receiver_http_status: 503,
        receiver_response: null,
        at: firstAt,
      },
      { ...delivered, at: clock.now().toISOString() },
    ]);
    expect(await store.eventLog.findByEventId('evt_unknown')).toEqual([]);
  });

  it('records a refused event that lacks the fields a valid body has', async () => {
    const refused: EventLogEntry = {
      event_id: 'evt_refused',
      direction: 'hostapp_to_miniapp',
      app_id: null,
      client_id: null,
      event_type: null,
      external_event_id: null,
      payload: null,
      outcome: 'refused',
      error_code: 'INVALID_EVENT_DATA',
      receiver_http_status: null,
      receiver_response: null,
      duration_ms: null,
    };
    await store.eventLog.record(refused);
    expect(await store.eventLog.findByEventId('evt_refused')).toEqual([{ ...refused, at: clock.now().toISOString() }]);
  });
});
