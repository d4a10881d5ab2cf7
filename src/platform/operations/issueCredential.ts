import { DashboardCaller } from '../dashboard/caller.js';
import { partnerChanges } from '../dashboard/changes.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: issue a secret_key or signing secret (a rotation's start); the secret is shown once. */
export const issueCredential: OperationHandler<'issueCredential'> = {
  async handle({ caller, params, body }, platform) {
    return {
      status: 201,
      body: await partnerChanges.issueCredential(platform, new DashboardCaller(caller), params.partner_type, params.partner_id, body.kind),
    };
  },
};
