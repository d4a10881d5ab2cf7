import { DashboardCaller } from '../dashboard/caller.js';
import { statementReads } from '../dashboard/statements.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a page of a partner's statement of one closed day (ADR 0041). */
export const getPartnerStatement: OperationHandler<'getPartnerStatement'> = {
  async handle({ caller, params, query }, platform) {
    return {
      body: await statementReads.getPartnerStatement(
        platform,
        new DashboardCaller(caller),
        params.partner_type,
        params.partner_id,
        params.day,
        query,
      ),
    };
  },
};
