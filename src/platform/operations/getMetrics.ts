import type { OperationHandler } from './handler.js';

/** Prometheus metrics in the text format. */
export const getMetrics: OperationHandler<'getMetrics'> = {
  async handle(_request, platform) {
    return { body: await platform.metrics.registry.metrics(), contentType: platform.metrics.registry.contentType };
  },
};
