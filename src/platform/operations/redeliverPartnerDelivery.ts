import { DashboardCaller } from '../dashboard/caller.js';
import { partnerReads } from '../dashboard/reads.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: deliver one of a partner's E6 callbacks again. */
export const redeliverPartnerDelivery: OperationHandler<'redeliverPartnerDelivery'> = {
  async handle({ caller, params }, platform) {
    return {
      body: await partnerReads.redeliver(platform, new DashboardCaller(caller), params.partner_type, params.partner_id, params.delivery_id),
    };
  },
};
