import { decimalText, stringifyLossless } from '../../contract/json.js';
import { ApiError } from '../../contract/errors.js';
import { createOrderPaymentAtHostapp } from '../outbound/hostappCalls.js';
import { hostappOrderRequest, hostappOrderText } from '../payments/hostappOrder.js';
import { hostappFailure, hostappRefusal } from '../payments/partnerErrors.js';
import { newPaymentSchedule } from '../payments/lifecycle.js';
import { paymentParties } from '../payments/parties.js';
import type { OperationHandler } from './handler.js';

/** E1 (ADR 0003, 0007, 0016): check, reserve the idempotency keys, ask the host app (E3), record. */
export const createOrderPayment: OperationHandler<'createOrderPayment'> = {
  caller: (body) => ({ kind: 'miniapp', id: body.app_id }),

  async handle({ body, headers, caller, registry }, platform) {
    const { hostapp } = paymentParties(registry, caller, body.client_id);
    const e3 = hostappOrderRequest(body);
    if (!e3.ok) throw new ApiError('INVALID_ORDER_DATA', e3.message);

    const order = body.order;
    // The payment's life (ADR 0039): it expires after the host app's lifetime, or the miniapp's
    // shorter one (validated as an integer within the contract's bounds), told on E3.
    const requestedLifetimeSeconds =
      body.payment_lifetime_seconds === undefined ? undefined : Number(decimalText(body.payment_lifetime_seconds));
    const schedule = newPaymentSchedule(hostapp, requestedLifetimeSeconds, new Date());
    const e3Text = hostappOrderText(body.client_id, e3.body, { expiresAt: schedule.expiresAt, requestedLifetimeSeconds });
    const reservation = await platform.store.idempotency.reserve(
      {
        app_id: body.app_id,
        client_id: body.client_id,
        miniapp_order_id: order.miniapp_order_id ?? null,
        idempotency_key: headers['idempotency-key'] ?? null,
      },
      e3Text.hash,
    );
    switch (reservation.outcome) {
      case 'done':
        return { body: { order_payment_id: reservation.order_payment_id } };
      case 'conflict':
        throw new ApiError('IDEMPOTENCY_CONFLICT', 'this miniapp_order_id or Idempotency-Key was already used with a different body');
      case 'in_progress':
        throw new ApiError(
          'REQUEST_IN_PROGRESS',
          'an E1 with the same miniapp_order_id or Idempotency-Key is still waiting for the host app; retry in a second',
        );
    }

    const answer = await createOrderPaymentAtHostapp(platform, hostapp, e3Text.body, {
      hostappUserId: order.hostapp_user_id,
      userAccessToken: headers['x-user-access-token'],
    });
    if (!answer.ok) {
      await platform.store.idempotency.release(reservation.reservation);
      throw hostappFailure(answer.failure, 'did not create the order payment (E3)');
    }
    const created = answer.body;
    if ('error_code' in created) {
      await platform.store.idempotency.release(reservation.reservation);
      throw hostappRefusal(created.error_code, 'INVALID_ORDER_DATA', 'the order payment (E3)');
    }
    const recorded = await platform.store.orderPayments.create(
      {
        order_payment_id: created.order_payment_id,
        app_id: body.app_id,
        client_id: body.client_id,
        miniapp_order_id: order.miniapp_order_id ?? null,
        hostapp_user_id: order.hostapp_user_id ?? null,
        amount: decimalText(order.amount),
        currency: order.currency,
        order_json: e3Text.order,
        custom_attributes: created.custom_attributes === undefined ? null : stringifyLossless(created.custom_attributes),
        expires_at: schedule.expiresAt,
        reconcile_at: schedule.reconcileAt,
      },
      reservation.reservation,
    );
    if (recorded.outcome === 'bound_elsewhere') {
      // ADR 0016: the id names another order. Nothing was recorded, so nothing is marked done:
      // the keys are released and a retry asks the host app again.
      await platform.store.idempotency.release(reservation.reservation);
      throw new ApiError(
        'HOSTAPP_INVALID_RESPONSE',
        `the host app server answered the order payment (E3) with order_payment_id ${created.order_payment_id}, which it already gave another order; nothing was recorded`,
      );
    }
    return { body: { order_payment_id: created.order_payment_id } };
  },
};
