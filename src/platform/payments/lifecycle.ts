import { lifecycleSettings } from '../../contract/limits.js';
import { operation } from '../../contract/operations.js';
import type { Hostapp } from '../registry/registry.js';

/**
 * A payment's life in time (ADR 0039): its expiry, and when the platform asks the host app
 * about it (E4) when no E5 comes. Every figure is the contract's: the host app settings' default
 * and bounds (HostappSettingsFields), and `x-reconciliation` on E4.
 */

/** `x-reconciliation` on getHostappPaymentStatus. */
export interface ReconcilePolicy {
  /** The at-expiry ask is made this long after `expires_at`. */
  expiryGraceMs: number;
  /** Before expiry: after ask n, wait min(firstDelayMs * multiplier^(n-1), maxDelayMs), ± jitter. */
  backoff: { firstDelayMs: number; multiplier: number; maxDelayMs: number; jitter: number };
  /** After expiry (stuck): every intervalMs ± jitter, until horizonMs past `expires_at`. */
  stuck: { intervalMs: number; jitter: number; horizonMs: number };
  /** Asks open to one host app at once, across instances. */
  maxInFlight: number;
  /** Asks started per second per host app, across instances. */
  perSecond: number;
  /** While a host app fails to answer: paused first for up to firstDelayMs, doubling up to maxDelayMs, with full jitter. */
  hostappBackoff: { firstDelayMs: number; maxDelayMs: number };
}

export function reconcilePolicy(): ReconcilePolicy {
  if (policy) return policy;
  const value = operation('getHostappPaymentStatus').extensions['x-reconciliation'] as ReconcilePolicy | undefined;
  const positive = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n > 0;
  const fraction = (n: unknown) => typeof n === 'number' && n >= 0 && n < 1;
  if (
    !value ||
    !positive(value.expiryGraceMs) ||
    ![value.backoff?.firstDelayMs, value.backoff?.multiplier, value.backoff?.maxDelayMs].every(positive) ||
    !fraction(value.backoff.jitter) ||
    ![value.stuck?.intervalMs, value.stuck?.horizonMs].every(positive) ||
    !fraction(value.stuck.jitter) ||
    !Number.isInteger(value.maxInFlight) ||
    !positive(value.maxInFlight) ||
    !positive(value.perSecond) ||
    ![value.hostappBackoff?.firstDelayMs, value.hostappBackoff?.maxDelayMs].every(positive)
  )
    throw new Error('the contract lost x-reconciliation (or part of it) on getHostappPaymentStatus');
  policy = value;
  return policy;
}
let policy: ReconcilePolicy | undefined;

/** The shared budget of the platform's own status queries per host app: `perSecond`, bursts of as many. */
export function reconcileBudget(): { perSecond: number; burst: number } {
  const { perSecond } = reconcilePolicy();
  return { perSecond, burst: perSecond };
}

/** A host app's payment lifetime and reconcile delay: its settings, else the contract's defaults. */
export function lifecycleOf(hostapp: Hostapp): { lifetimeMs: number; reconcileAfterMs: number } {
  const defaults = lifecycleSettings();
  return {
    lifetimeMs: (hostapp.registration.payment_lifetime_seconds ?? defaults.paymentLifetimeSeconds.default) * 1000,
    reconcileAfterMs: (hostapp.registration.reconcile_after_seconds ?? defaults.reconcileAfterSeconds.default) * 1000,
  };
}

/**
 * A payment created `now`: it expires after the host app's lifetime, or the miniapp's shorter
 * one, and is first asked about after the host app's reconcile delay, or at expiry if sooner.
 */
export function newPaymentSchedule(
  hostapp: Hostapp,
  requestedLifetimeSeconds: number | undefined,
  now: Date,
): { expiresAt: Date; reconcileAt: Date } {
  const { lifetimeMs, reconcileAfterMs } = lifecycleOf(hostapp);
  const lifetime = Math.min(lifetimeMs, requestedLifetimeSeconds === undefined ? Infinity : requestedLifetimeSeconds * 1000);
  const expiresAt = new Date(now.getTime() + lifetime);
  return {
    expiresAt,
    reconcileAt: new Date(Math.min(now.getTime() + reconcileAfterMs, expiresAt.getTime() + reconcilePolicy().expiryGraceMs)),
  };
}

/**
 * After an ask that did not settle the payment, made at `now` as ask number `asks`: when to ask
 * next, or null to stop; and whether the payment is stuck. Before expiry the asks back off
 * exponentially and the last is the at-expiry ask. A payment is stuck when the host app still
 * answers it `in_process` (or not found) at or after the at-expiry ask, or has left it unanswered
 * (an error, a time-out, a body that breaks the contract) for the slow schedule's interval since
 * then (ADR 0039); a stuck payment stays stuck and follows the slow schedule up to the final
 * horizon. Until then an unanswered payment past its expiry is asked again on the back-off's
 * bounds, the delay growing with the time since the at-expiry ask: one failed ask at expiry must
 * not put off hearing that the host app closed the payment. The platform never decides an outcome.
 */
export function nextAsk(
  policy: ReconcilePolicy,
  { now, asks, expiresAt, answered, stuck }: { now: Date; asks: number; expiresAt: Date; answered: boolean; stuck: boolean },
  random: () => number = Math.random,
): { at: Date | null; stuck: boolean } {
  const atExpiry = expiresAt.getTime() + policy.expiryGraceMs;
  const spread = (ms: number, jitter: number) => ms * (1 - jitter + 2 * jitter * random());
  const { firstDelayMs, multiplier, maxDelayMs, jitter } = policy.backoff;
  if (now.getTime() < atExpiry) {
    const nominal = Math.min(firstDelayMs * multiplier ** Math.max(0, asks - 1), maxDelayMs);
    return { at: new Date(Math.min(now.getTime() + spread(nominal, jitter), atExpiry)), stuck: false };
  }
  const unansweredFor = now.getTime() - atExpiry;
  if (!stuck && !answered && unansweredFor < policy.stuck.intervalMs) {
    const nominal = Math.min(Math.max(unansweredFor, firstDelayMs), maxDelayMs);
    return { at: new Date(now.getTime() + spread(nominal, jitter)), stuck: false };
  }
  const next = now.getTime() + spread(policy.stuck.intervalMs, policy.stuck.jitter);
  return { at: next > expiresAt.getTime() + policy.stuck.horizonMs ? null : new Date(next), stuck: true };
}
