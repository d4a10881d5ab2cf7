import { DashboardCaller } from '../dashboard/caller.js';
import { partnerReads } from '../dashboard/reads.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: one miniapp's settings. */
export const getMiniapp: OperationHandler<'getMiniapp'> = {
  async handle({ caller, params }, platform) {
    return { body: await partnerReads.getMiniapp(platform, new DashboardCaller(caller), params.app_id) };
  },
};
