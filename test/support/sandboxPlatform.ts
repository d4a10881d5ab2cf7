import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import { SANDBOX_ADMIN_TOKEN, startSandbox, type RunningSandbox } from '../../src/tools/sandbox/startSandbox.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';

export interface SandboxPlatform {
  platform: RunningPlatform;
  sandbox: RunningSandbox;
  close(): Promise<void>;
}

/**
 * What `npm start` runs, in-process on ephemeral ports: the sandbox partners and the platform
 * (PGlite in memory) with the sandbox admin token.
 */
export async function startSandboxPlatform(): Promise<SandboxPlatform> {
  let platformUrl = '';
  const sandbox = await startSandbox({ platformUrl: () => platformUrl, hostappPort: 0, miniappPort: 0 });
  try {
    const platform = await startPlatform({
      registry: registryFrom(sandbox.registry),
      config: {
        port: 0,
        host: '127.0.0.1',
        dataDir: 'memory://',
        databaseUrl: undefined,
        logLevel: 'silent',
        adminToken: SANDBOX_ADMIN_TOKEN,
      },
    });
    platformUrl = platform.url;
    return {
      platform,
      sandbox,
      close: async () => {
        await platform.close();
        await sandbox.close();
      },
    };
  } catch (error) {
    await sandbox.close();
    throw error;
  }
}
