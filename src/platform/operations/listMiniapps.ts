import { DashboardCaller } from '../dashboard/caller.js';
import { partnerLists } from '../dashboard/lists.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a page of miniapps (a partner sees only itself). */
export const listMiniapps: OperationHandler<'listMiniapps'> = {
  async handle({ caller, query }, platform) {
    return { body: await partnerLists.listMiniapps(platform, new DashboardCaller(caller), query) };
  },
};
