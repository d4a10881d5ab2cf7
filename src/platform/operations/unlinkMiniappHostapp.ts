import { ApiError } from '../../contract/errors.js';
import type { OperationHandler } from './handler.js';

export const unlinkMiniappHostapp: OperationHandler<'unlinkMiniappHostapp'> = {
  async handle() {
    throw new ApiError('UNKNOWN_ERROR', 'not available yet');
  },
};
