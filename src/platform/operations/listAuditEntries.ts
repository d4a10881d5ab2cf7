import { DashboardCaller } from '../dashboard/caller.js';
import { partnerReads } from '../dashboard/reads.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a partner's audit log, newest first. */
export const listAuditEntries: OperationHandler<'listAuditEntries'> = {
  async handle({ caller, params, query }, platform) {
    return {
      body: await partnerReads.listAudit(platform, new DashboardCaller(caller), params.partner_type, params.partner_id, query),
    };
  },
};
