import { DashboardCaller } from '../dashboard/caller.js';
import { eraseHostappUser as erase } from '../dashboard/erasure.js';
import type { OperationHandler } from './handler.js';

/** Dashboard, operators only: erases one host app user's personal data (ADR 0041). */
export const eraseHostappUser: OperationHandler<'eraseHostappUser'> = {
  async handle({ caller, body }, platform) {
    return { body: await erase(platform, new DashboardCaller(caller), body) };
  },
};
