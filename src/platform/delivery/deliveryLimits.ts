import { operation } from '../../contract/operations.js';

/** How E6 delivery is bounded, as the contract states it on receiveOrderCompletion (ADR 0008). */
export interface DeliveryLimits {
  /** `x-timeout-ms`: how long one attempt may take. */
  timeoutMs: number;
  /** `x-max-in-flight`: attempts open to one miniapp server at once, across all instances. */
  maxInFlightPerMiniapp: number;
}

export function deliveryLimits(): DeliveryLimits {
  const e6 = operation('receiveOrderCompletion');
  const maxInFlight = e6.extensions['x-max-in-flight'];
  if (e6.timeoutMs === undefined) throw new Error('the contract lost x-timeout-ms on receiveOrderCompletion');
  if (typeof maxInFlight !== 'number' || !Number.isInteger(maxInFlight) || maxInFlight < 1) {
    throw new Error('the contract lost x-max-in-flight (a positive integer) on receiveOrderCompletion');
  }
  return { timeoutMs: e6.timeoutMs, maxInFlightPerMiniapp: maxInFlight };
}

/**
 * A lease must outlive the attempt it covers, or another claimer could take the delivery while
 * the first attempt is still in flight and the miniapp would get it twice at once. Twice the
 * time-out leaves the attempt's answer and its recording ample room.
 */
export function checkLease(leaseMs: number, limits: DeliveryLimits): void {
  if (!(leaseMs >= 2 * limits.timeoutMs)) {
    throw new Error(`the E6 lease (${leaseMs} ms) must be at least twice the E6 time-out (${limits.timeoutMs} ms)`);
  }
}
