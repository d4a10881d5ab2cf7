import { ApiError } from '../../contract/errors.js';
import type { OperationHandler } from './handler.js';

export const listPartnerDeliveries: OperationHandler<'listPartnerDeliveries'> = {
  async handle() {
    throw new ApiError('UNKNOWN_ERROR', 'not available yet');
  },
};
