import type { OperationHandler } from './handler.js';

/** Readiness: migrated database answering, not shutting down. */
export const getReadiness: OperationHandler<'getReadiness'> = {
  async handle(_request, platform) {
    let database: 'ok' | 'failing' = 'ok';
    try {
      await platform.store.ping();
    } catch {
      database = 'failing';
    }
    const ready = database === 'ok' && platform.accepting;
    return {
      status: ready ? 200 : 503,
      body: { status: ready ? 'ready' : 'not_ready', checks: { database, worker: platform.accepting ? 'ok' : 'failing' } },
    };
  },
};
