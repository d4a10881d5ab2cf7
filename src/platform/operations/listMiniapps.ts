import { ApiError } from '../../contract/errors.js';
import type { OperationHandler } from './handler.js';

export const listMiniapps: OperationHandler<'listMiniapps'> = {
  async handle() {
    throw new ApiError('UNKNOWN_ERROR', 'not available yet');
  },
};
