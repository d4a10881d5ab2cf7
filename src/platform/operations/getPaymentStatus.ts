import { ApiError } from '../../contract/errors.js';
import { paymentParties } from '../payments/parties.js';
import { hostappFailure, hostappRefusal } from '../payments/partnerErrors.js';
import { askHostappStatus } from '../payments/statusQuery.js';
import { settle } from '../payments/settlement.js';
import type { OrderPayment } from '../store/index.js';
import type { OperationHandler } from './handler.js';

/**
 * E2 (ADR 0006): terminal payments are answered from the record; payments in process are looked
 * up at the host app (E4), and a terminal status learned there is recorded like an E5 would be.
 */
export const getPaymentStatus: OperationHandler<'getPaymentStatus'> = {
  caller: (body) => ({ kind: 'miniapp', id: body.app_id }),

  async handle({ body, headers, caller, registry }, platform) {
    const { hostapp } = paymentParties(registry, caller, body.client_id);
    const ref = { order_payment_id: body.order_payment_id, app_id: body.app_id, client_id: body.client_id };
    let record = await platform.store.orderPayments.get(ref);
    if (!record)
      throw new ApiError(
        'ORDER_NOT_FOUND',
        `no order payment ${ref.order_payment_id} for app_id ${ref.app_id} and client_id ${ref.client_id}`,
      );
    if (record.payment_status !== 'in_process') return { body: report(record) };

    const { answer } = await askHostappStatus(
      hostapp,
      ref,
      { hostappUserId: record.hostapp_user_id ?? undefined, userAccessToken: headers['x-user-access-token'] },
      platform,
    );
    switch (answer.kind) {
      case 'failed':
        throw hostappFailure(answer.failure, 'did not give the payment status (E4)');
      case 'refused':
        throw hostappRefusal(answer.error_code, 'ORDER_NOT_FOUND', 'the status query (E4)');
      case 'invalid':
        throw new ApiError('HOSTAPP_INVALID_RESPONSE', answer.message);
    }
    if (answer.payment_status !== 'in_process') {
      const { payment_status, payment_fail_reason, custom_attributes } = answer;
      const result = await settle(platform, { ...ref, payment_status, payment_fail_reason, custom_attributes, source: 'E4' });
      if (result.outcome === 'not_found') throw new ApiError('ORDER_NOT_FOUND', `order payment ${ref.order_payment_id} disappeared`);
      record = result.orderPayment;
    }
    return { body: report(record) };
  },
};

function report(record: OrderPayment) {
  return {
    order_payment_id: record.order_payment_id,
    app_id: record.app_id,
    client_id: record.client_id,
    payment_status: record.payment_status,
    ...(record.payment_fail_reason !== null && { payment_fail_reason: record.payment_fail_reason }),
    ...(record.expires_at !== null && { expires_at: record.expires_at }),
  };
}
