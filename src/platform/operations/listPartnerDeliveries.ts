import { DashboardCaller } from '../dashboard/caller.js';
import { partnerReads } from '../dashboard/reads.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a partner's E6 deliveries, newest first. */
export const listPartnerDeliveries: OperationHandler<'listPartnerDeliveries'> = {
  async handle({ caller, params, query }, platform) {
    return {
      body: await partnerReads.listDeliveries(platform, new DashboardCaller(caller), params.partner_type, params.partner_id, query),
    };
  },
};
