import type { Config } from '../../../src/platform/config.js';
import { startPlatform, type RunningPlatform } from '../../../src/platform/server.js';
import { fakeHostapp, fakeMiniapp, type FakePartner } from './fakePartner.js';
import { testRegistry } from './registry.js';

export interface Harness {
  running: RunningPlatform;
  hostapp: FakePartner;
  miniapp: FakePartner;
  close(): Promise<void>;
}

/**
 * An in-process platform (PGlite in memory unless `config` says otherwise) whose registered
 * partners are counting fake servers. The rate limits are lifted: these tests send
 * thousands of requests as one partner and test the answers, not the limiter.
 */
export async function startHarness(config: Partial<Config> = {}): Promise<Harness> {
  const hostapp = await fakeHostapp().start();
  const miniapp = await fakeMiniapp().start();
  const running = await startPlatform({
    registry: testRegistry(hostapp.url, miniapp.url),
    config: {
      port: 0,
      host: '127.0.0.1',
      dataDir: 'memory://',
      databaseUrl: undefined,
      logLevel: 'silent',
      rateLimit: { perSecond: 1e9, burst: 1e9 },
      failedAuthLimit: { perSecond: 1e9, burst: 1e9 },
      ...config,
    },
  });
  return {
    running,
    hostapp,
    miniapp,
    async close() {
      await running.close();
      await Promise.all([hostapp.stop(), miniapp.stop()]);
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
