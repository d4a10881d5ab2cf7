import { retentionPolicy } from '../records/policy.js';
import type { OperationHandler } from './handler.js';

/** Dashboard: the retention periods in force (ADR 0041). */
export const getRetentionPolicy: OperationHandler<'getRetentionPolicy'> = {
  async handle(_request, platform) {
    return { body: retentionPolicy(platform.config.retention) };
  },
};
