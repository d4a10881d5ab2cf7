/**
 * The stale-reservation window is the contract's (E1's `x-reservation-stale-after-ms`), and the
 * platform refuses database time-outs that would let a live E1 outlast it (ADR 0037).
 */
import { describe, expect, it } from 'vitest';
import { reservationStaleAfterMs } from '../../../src/contract/limits.js';
import { answerLimits } from '../../../src/platform/outbound/partnerCall.js';
import { checkReservationWindow } from '../../../src/platform/payments/reservationWindow.js';
import { defaultDatabaseTimeouts, openPglite } from '../../../src/platform/store/db.js';
import { createStore } from '../../../src/platform/store/index.js';
import { migrate } from '../../../src/platform/store/migrate.js';
import { manualClock } from '../../store/fixtures.js';

describe('the stale-reservation window (ADR 0037)', () => {
  it('is longer than the longest a live E1 holds its key: E3’s time-out and one bounded database statement', () => {
    const window = reservationStaleAfterMs();
    const longestHold =
      answerLimits('createHostappOrderPayment').timeoutMs + defaultDatabaseTimeouts.connectMs + defaultDatabaseTimeouts.statementMs;
    expect(window).toBeGreaterThan(longestHold);
    // And shorter than the 30 s it used to be, which outlasted a client's patience (ADR 0010: 15 s).
    expect(window).toBeLessThanOrEqual(15_000);
    expect(() => checkReservationWindow(defaultDatabaseTimeouts)).not.toThrow();
  });

  it('refuses database time-outs that would let a live E1 outlast the window', () => {
    expect(() => checkReservationWindow({ connectMs: 3_000, statementMs: 3_000 })).toThrow(/MINIBRIDGE_DATABASE_\*_TIMEOUT_MS/);
  });

  it('is the store’s default: a key held past it is taken over, not before', async () => {
    const db = await openPglite('memory://');
    try {
      await migrate(db);
      const clock = manualClock();
      const store = createStore(db, { clock: clock.now });
      const scope = { app_id: 'ma_shop', client_id: 'ha_superapp', miniapp_order_id: 'mo_window', idempotency_key: null };
      expect((await store.idempotency.reserve(scope, 'h')).outcome).toBe('reserved');
      clock.advance(reservationStaleAfterMs() - 1);
      expect(await store.idempotency.reserve(scope, 'h')).toEqual({ outcome: 'in_progress' });
      clock.advance(1);
      expect((await store.idempotency.reserve(scope, 'h')).outcome).toBe('reserved');
    } finally {
      await db.close();
    }
  });
});
