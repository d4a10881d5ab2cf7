import type { Config } from '../../../src/platform/config.js';
import { startPlatform, type RunningPlatform } from '../../../src/platform/server.js';
import { openPlatformDatabase, type TestBackend } from '../../support/databases.js';
import { fakeHostapp, fakeMiniapp, type FakePartner } from './fakePartner.js';
import { testRegistry } from './registry.js';

export interface Harness {
  running: RunningPlatform;
  hostapp: FakePartner;
  miniapp: FakePartner;
  close(): Promise<void>;
}

/**
 * An in-process platform on a throw-away database of its own on `backend` (in-memory PGlite by
 * default, or a fresh PostgreSQL database) whose registered
 * partners are counting fake servers. The rate limits are lifted: these tests send
 * thousands of requests as one partner and test the answers, not the limiter.
 */
export async function startHarness(config: Partial<Config> = {}, backend: TestBackend['name'] = 'pglite'): Promise<Harness> {
  const database = await openPlatformDatabase(backend);
  const hostapp = await fakeHostapp().start();
  const miniapp = await fakeMiniapp().start();
  let running: RunningPlatform;
  try {
    running = await startPlatform({
      registry: testRegistry(hostapp.url, miniapp.url),
      config: {
        port: 0,
        host: '127.0.0.1',
        ...database.config,
        logLevel: 'silent',
        rateLimit: { perSecond: 1e9, burst: 1e9 },
        failedAuthLimit: { perSecond: 1e9, burst: 1e9 },
        ...config,
      },
    });
  } catch (error) {
    await Promise.all([hostapp.stop(), miniapp.stop()]);
    await database.dispose();
    throw error;
  }
  return {
    running,
    hostapp,
    miniapp,
    async close() {
      try {
        await running.close();
        await Promise.all([hostapp.stop(), miniapp.stop()]);
      } finally {
        await database.dispose();
      }
    },
  };
}

/** Polls until `condition` holds; fails after `timeoutMs`. */
export async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
