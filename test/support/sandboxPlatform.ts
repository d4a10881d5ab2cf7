import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import { SANDBOX_ADMIN_TOKEN, startSandbox, type RunningSandbox } from '../../src/tools/sandbox/startSandbox.js';
import type { Config } from '../../src/platform/config.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';
import { openPlatformDatabase, type TestBackend } from './databases.js';

export interface SandboxPlatform {
  platform: RunningPlatform;
  sandbox: RunningSandbox;
  close(): Promise<void>;
}

/**
 * What `npm start` runs, in-process on ephemeral ports: the sandbox partners and the platform
 * (PGlite in memory, or a fresh PostgreSQL database with `'postgres'`) with the sandbox admin token.
 * `config` overrides the platform's settings (a suite that only reads pages turns its workers off).
 */
export async function startSandboxPlatform(
  backend: TestBackend['name'] = 'pglite',
  config: Partial<Config> = {},
): Promise<SandboxPlatform> {
  let platformUrl = '';
  const database = await openPlatformDatabase(backend);
  const sandbox = await startSandbox({ platformUrl: () => platformUrl, hostappPort: 0, miniappPort: 0 });
  try {
    const platform = await startPlatform({
      registry: registryFrom(sandbox.registry),
      config: {
        port: 0,
        host: '127.0.0.1',
        ...database.config,
        logLevel: 'silent',
        adminToken: SANDBOX_ADMIN_TOKEN,
        ...config,
      },
    });
    platformUrl = platform.url;
    return {
      platform,
      sandbox,
      close: async () => {
        try {
          await platform.close();
          await sandbox.close();
        } finally {
          await database.dispose();
        }
      },
    };
  } catch (error) {
    await sandbox.close();
    await database.dispose();
    throw error;
  }
}
