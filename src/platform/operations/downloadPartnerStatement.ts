import { DashboardCaller } from '../dashboard/caller.js';
import { statementReads } from '../dashboard/statements.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: a partner's statement of one closed day as a CSV download, streamed (ADR 0041). */
export const downloadPartnerStatement: OperationHandler<'downloadPartnerStatement'> = {
  handle({ caller, params }, platform) {
    return statementReads.downloadPartnerStatement(
      platform,
      new DashboardCaller(caller),
      params.partner_type,
      params.partner_id,
      params.day,
    );
  },
};
