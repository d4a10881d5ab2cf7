import { stringifyLossless } from '../../contract/json.js';
import { ApiError } from '../../contract/errors.js';
import { paymentParties } from '../payments/parties.js';
import { settle } from '../payments/settlement.js';
import type { OperationHandler } from './handler.js';

/**
 * E5 (ADR 0006, 0008): the transition and its E6 outbox record commit together before the
 * answer, so an accepted status change survives a crash and reaches the miniapp server.
 */
export const completeOrder: OperationHandler<'completeOrder'> = {
  caller: (body) => ({ kind: 'hostapp', id: body.client_id }),

  async handle({ body, caller, registry }, platform) {
    paymentParties(registry, caller, body.app_id);
    const result = await settle(platform, {
      order_payment_id: body.order_payment_id,
      app_id: body.app_id,
      client_id: body.client_id,
      payment_status: body.payment_status,
      payment_fail_reason: body.payment_fail_reason ?? null,
      custom_attributes: body.custom_attributes === undefined ? null : stringifyLossless(body.custom_attributes),
      source: 'E5',
    });
    const id = body.order_payment_id;
    switch (result.outcome) {
      case 'not_found':
        throw new ApiError('ORDER_NOT_FOUND', `no order payment ${id} for app_id ${body.app_id} and client_id ${body.client_id}`);
      case 'conflict':
        throw new ApiError(
          'PAYMENT_STATUS_CONFLICT',
          `order payment ${id} is already ${result.orderPayment.payment_status}; it cannot become ${body.payment_status}`,
        );
      case 'unchanged':
        return {
          body: { code: 'SUCCESS', message: `order payment ${id} was already ${result.orderPayment.payment_status}; nothing changed` },
        };
      case 'applied':
        return { body: { code: 'SUCCESS', message: `order payment ${id} is now ${body.payment_status}` } };
    }
  },
};
