import type { components } from '../../../generated/types/platform.js';

type PaymentStatus = components['schemas']['PaymentStatus'];

/**
 * What a requested payment status does to the recorded one (D6):
 * `apply` moves it, `unchanged` accepts the request without effect, `conflict` refuses it.
 */
export type TransitionDecision = 'apply' | 'unchanged' | 'conflict';

export function isTerminal(status: PaymentStatus): boolean {
  return status !== 'in_process';
}

export function decideTransition(current: PaymentStatus, requested: PaymentStatus): TransitionDecision {
  if (current === requested) return 'unchanged';
  if (!isTerminal(current)) return 'apply';
  return 'conflict';
}
