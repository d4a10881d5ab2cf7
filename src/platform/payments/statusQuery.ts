import type { components } from '../../../generated/types/platform.js';
import { stringifyLossless } from '../../contract/json.js';
import { getPaymentStatusAtHostapp, type PaymentUser } from '../outbound/hostappCalls.js';
import type { PartnerCaller, PartnerFailure } from '../outbound/partnerCall.js';
import type { Hostapp } from '../registry/registry.js';
import type { OrderPaymentRef } from '../store/index.js';

type PaymentStatus = components['schemas']['PaymentStatus'];

/** What the host app's E4 said about one payment, judged as every E4 answer is (ADR 0016). */
export type StatusAnswer =
  /** A report about the payment asked about. */
  | { kind: 'report'; payment_status: PaymentStatus; payment_fail_reason: string | null; custom_attributes: string | null }
  /** An `error_code` instead of a report. */
  | { kind: 'refused'; error_code: string }
  /** No valid answer: the call failed, or the answer broke the host app API. */
  | { kind: 'failed'; failure: PartnerFailure }
  /** A valid answer that is about something else, or about nothing: never applied to this payment. */
  | { kind: 'invalid'; message: string };

/**
 * Asks the host app for a payment's status (E4, by POST or GET as it registered) and judges the
 * answer: the partner call checks size, shape and type (ADR 0016); here, that it is a report of
 * its own payment_status about exactly the payment asked about. E2 and the platform's own
 * reconciliation (ADR 0039) both ask through here, so a reconciliation answer passes every
 * check an E2 answer does.
 */
export async function askHostappStatus(
  hostapp: Hostapp,
  ref: OrderPaymentRef,
  user: PaymentUser,
  caller: PartnerCaller,
): Promise<{ answer: StatusAnswer; durationMs: number }> {
  const outcome = await getPaymentStatusAtHostapp(caller, hostapp, ref, user);
  const durationMs = outcome.durationMs;
  if (!outcome.ok) return { answer: { kind: 'failed', failure: outcome.failure }, durationMs };
  const status = outcome.body;
  if ('error_code' in status) return { answer: { kind: 'refused', error_code: status.error_code }, durationMs };
  if (typeof status.payment_status !== 'string')
    return {
      answer: {
        kind: 'invalid',
        message: 'the host app server answered the status query (E4) with neither an own payment_status nor an error_code',
      },
      durationMs,
    };
  // An answer is about the payment asked about or about nothing (ADR 0016): a report naming
  // another payment, miniapp or host app is never applied to this one.
  const mismatch = (['order_payment_id', 'app_id', 'client_id'] as const).find((field) => status[field] !== ref[field]);
  if (mismatch)
    return {
      answer: {
        kind: 'invalid',
        message: `the host app server answered the status query (E4) about ${mismatch} ${String(status[mismatch])}, not ${ref[mismatch]}; nothing was changed`,
      },
      durationMs,
    };
  return {
    answer: {
      kind: 'report',
      payment_status: status.payment_status,
      payment_fail_reason: status.payment_fail_reason ?? null,
      custom_attributes: status.custom_attributes === undefined ? null : stringifyLossless(status.custom_attributes),
    },
    durationMs,
  };
}
