import { DashboardCaller } from '../dashboard/caller.js';
import { paymentReads } from '../dashboard/payments.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: one payment of a partner, with its timeline (ADR 0039). */
export const getPartnerPayment: OperationHandler<'getPartnerPayment'> = {
  async handle({ caller, params }, platform) {
    return {
      body: await paymentReads.getPartnerPayment(
        platform,
        new DashboardCaller(caller),
        params.partner_type,
        params.partner_id,
        params.client_id,
        params.order_payment_id,
      ),
    };
  },
};
