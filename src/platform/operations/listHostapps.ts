import { DashboardCaller } from '../dashboard/caller.js';
import { partnerLists } from '../dashboard/lists.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a page of host apps (a partner sees only itself). */
export const listHostapps: OperationHandler<'listHostapps'> = {
  async handle({ caller, query }, platform) {
    return { body: await partnerLists.listHostapps(platform, new DashboardCaller(caller), query) };
  },
};
