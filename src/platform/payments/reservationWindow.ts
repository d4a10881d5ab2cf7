import { reservationStaleAfterMs } from '../../contract/limits.js';
import { answerLimits } from '../outbound/partnerCall.js';
import type { DatabaseTimeouts } from '../store/db.js';

/** Clocks of instances sharing a database may disagree by this much (NTP keeps them far closer). */
const clockSkewMarginMs = 1_000;

/**
 * An E1 holds its idempotency reservation from the reservation statement to the record that
 * completes it: at most E3's time-out plus one database statement (a connection and an answer,
 * ADR 0037). A reservation is taken over as abandoned after E1's `x-reservation-stale-after-ms`,
 * so that must be longer, or a repeat could take over a key its first call still holds and ask
 * the host app twice. Refuses to start with database time-outs that break it.
 */
export function checkReservationWindow(timeouts: DatabaseTimeouts): void {
  const longestHold = answerLimits('createHostappOrderPayment').timeoutMs + timeouts.connectMs + timeouts.statementMs;
  const staleAfter = reservationStaleAfterMs();
  if (longestHold + clockSkewMarginMs > staleAfter)
    throw new Error(
      `the database time-outs (connect ${timeouts.connectMs} ms, statement ${timeouts.statementMs} ms) let an E1 hold its key for ${longestHold} ms, ` +
        `too close to the ${staleAfter} ms after which a repeat takes it over (x-reservation-stale-after-ms): lower MINIBRIDGE_DATABASE_*_TIMEOUT_MS`,
    );
}
