import { DashboardCaller } from '../dashboard/caller.js';
import { partnerReads } from '../dashboard/reads.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a partner's credential records (never a secret). */
export const listCredentials: OperationHandler<'listCredentials'> = {
  async handle({ caller, params }, platform) {
    return {
      body: await partnerReads.listCredentials(platform, new DashboardCaller(caller), params.partner_type, params.partner_id),
    };
  },
};
