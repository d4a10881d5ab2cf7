import { operation } from '../../contract/operations.js';

/** E6's retry schedule, as the contract's `x-retry-schedule` on receiveOrderCompletion states it (ADR 0008). */
export interface RetrySchedule {
  firstDelayMs: number;
  multiplier: number;
  maxDelayMs: number;
  jitter: number;
  horizonMs: number;
}

export function retrySchedule(): RetrySchedule {
  const schedule = operation('receiveOrderCompletion').extensions['x-retry-schedule'] as RetrySchedule | undefined;
  if (!schedule) throw new Error('the contract lost x-retry-schedule on receiveOrderCompletion');
  return schedule;
}

/**
 * When to try again after failed attempt number `attempt` (1-based), or null when that would
 * fall past the schedule's horizon and the delivery is dead: exponential back-off capped at
 * maxDelayMs, then ±jitter so many deliveries failing together do not retry together.
 */
export function nextAttemptAt(
  schedule: RetrySchedule,
  attempt: number,
  horizonStartedAt: Date,
  now: Date,
  random: () => number = Math.random,
): Date | null {
  const nominal = Math.min(schedule.firstDelayMs * schedule.multiplier ** (attempt - 1), schedule.maxDelayMs);
  const delay = nominal * (1 - schedule.jitter + 2 * schedule.jitter * random());
  const at = new Date(now.getTime() + delay);
  return at.getTime() > horizonStartedAt.getTime() + schedule.horizonMs ? null : at;
}
