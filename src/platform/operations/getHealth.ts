import type { OperationHandler } from './handler.js';

/** Liveness: the process answers. */
export const getHealth: OperationHandler<'getHealth'> = {
  handle: async () => ({ body: { status: 'ok' } }),
};
