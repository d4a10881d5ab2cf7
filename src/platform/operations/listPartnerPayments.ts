import { DashboardCaller } from '../dashboard/caller.js';
import { paymentReads } from '../dashboard/payments.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a partner's payments, newest first, filtered (ADR 0039). */
export const listPartnerPayments: OperationHandler<'listPartnerPayments'> = {
  async handle({ caller, params, query }, platform) {
    return {
      body: await paymentReads.listPartnerPayments(platform, new DashboardCaller(caller), params.partner_type, params.partner_id, query),
    };
  },
};
