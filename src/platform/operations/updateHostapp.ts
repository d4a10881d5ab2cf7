import { DashboardCaller } from '../dashboard/caller.js';
import { partnerChanges } from '../dashboard/changes.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: change a host app's settings, in force everywhere within a second. */
export const updateHostapp: OperationHandler<'updateHostapp'> = {
  async handle({ caller, params, body }, platform) {
    return { body: await partnerChanges.updateHostapp(platform, new DashboardCaller(caller), params.client_id, body) };
  },
};
