import { DashboardCaller } from '../dashboard/caller.js';
import { partnerCreation } from '../dashboard/creation.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: an operator creates a miniapp; its first secret_key is shown once. */
export const createMiniapp: OperationHandler<'createMiniapp'> = {
  async handle({ caller, body }, platform) {
    return { status: 201, body: await partnerCreation.createMiniapp(platform, new DashboardCaller(caller), body) };
  },
};
