import { DashboardCaller } from '../dashboard/caller.js';
import { partnerReads } from '../dashboard/reads.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: one host app's settings. */
export const getHostapp: OperationHandler<'getHostapp'> = {
  async handle({ caller, params }, platform) {
    return { body: await partnerReads.getHostapp(platform, new DashboardCaller(caller), params.client_id) };
  },
};
