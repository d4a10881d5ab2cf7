import { DashboardCaller } from '../dashboard/caller.js';
import { partnerChanges } from '../dashboard/changes.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: an operator creates a miniapp; its first secret_key is shown once. */
export const createMiniapp: OperationHandler<'createMiniapp'> = {
  async handle({ caller, body }, platform) {
    return { status: 201, body: await partnerChanges.createMiniapp(platform, new DashboardCaller(caller), body) };
  },
};
