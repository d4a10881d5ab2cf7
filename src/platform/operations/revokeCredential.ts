import { DashboardCaller } from '../dashboard/caller.js';
import { partnerChanges } from '../dashboard/changes.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: revoke a credential (a rotation's end). */
export const revokeCredential: OperationHandler<'revokeCredential'> = {
  async handle({ caller, params }, platform) {
    return {
      body: await partnerChanges.revokeCredential(
        platform,
        new DashboardCaller(caller),
        params.partner_type,
        params.partner_id,
        params.credential_id,
      ),
    };
  },
};
