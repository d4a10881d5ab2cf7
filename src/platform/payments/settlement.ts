import { parseLossless, stringifyLossless } from '../../contract/json.js';
import type { components } from '../../../generated/types/platform.js';
import type { PlatformContext } from '../context.js';
import type { OrderPayment, TransitionRequest, TransitionResult } from '../store/index.js';

type OrderCompletion = components['schemas']['OrderCompletion'];

/**
 * The E6 body for an order payment's recorded outcome, as JSON text. custom_attributes is
 * parsed and written losslessly so its numbers keep the digits the host app sent.
 */
export function orderCompletionBody(payment: OrderPayment): string {
  const completion: OrderCompletion = {
    ...(payment.miniapp_order_id === null ? {} : { miniapp_order_id: payment.miniapp_order_id }),
    hostapp_order_payment_id: payment.order_payment_id,
    hostapp_client_id: payment.client_id,
    payment_status: payment.payment_status,
    ...(payment.payment_fail_reason === null ? {} : { payment_fail_reason: payment.payment_fail_reason }),
    ...(payment.custom_attributes === null
      ? {}
      : { custom_attributes: parseLossless(payment.custom_attributes) as OrderCompletion['custom_attributes'] }),
    ...(payment.expires_at === null ? {} : { expires_at: payment.expires_at }),
  };
  return stringifyLossless(completion);
}

/**
 * The one way a payment's status changes after E1 (ADR 0006): an E5, an E2's E4 answer or the
 * platform's own E4 ask (ADR 0039) go through the one state machine in the store, which records
 * an applied change with its history entry and its E6 delivery; the worker is woken for it, and
 * a terminal answer contradicting the record is logged and changes nothing.
 */
export async function settle(platform: PlatformContext, request: TransitionRequest): Promise<TransitionResult> {
  const result = await platform.store.orderPayments.transition(request, orderCompletionBody);
  if (result.outcome === 'applied') platform.wakeWorker();
  if (result.outcome === 'conflict' && request.source !== 'E5')
    platform.log.warn(
      {
        order_payment_id: request.order_payment_id,
        source: request.source,
        recorded: result.orderPayment.payment_status,
        hostapp: request.payment_status,
      },
      'the host app contradicts the recorded terminal status; keeping the record',
    );
  return result;
}
