import { DashboardCaller } from '../dashboard/caller.js';
import { partnerChanges } from '../dashboard/changes.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: an operator creates a host app; its first secret_key is shown once. */
export const createHostapp: OperationHandler<'createHostapp'> = {
  async handle({ caller, body }, platform) {
    return { status: 201, body: await partnerChanges.createHostapp(platform, new DashboardCaller(caller), body) };
  },
};
