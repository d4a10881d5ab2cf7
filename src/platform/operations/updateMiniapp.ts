import { DashboardCaller } from '../dashboard/caller.js';
import { partnerChanges } from '../dashboard/changes.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: change a miniapp's settings, in force everywhere within a second. */
export const updateMiniapp: OperationHandler<'updateMiniapp'> = {
  async handle({ caller, params, body }, platform) {
    return { body: await partnerChanges.updateMiniapp(platform, new DashboardCaller(caller), params.app_id, body) };
  },
};
