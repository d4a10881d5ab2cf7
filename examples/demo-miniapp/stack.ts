/**
 * The whole flow on one machine: the platform (PGlite in memory), the sandbox host app (with the
 * host-app simulator page at /simulator/) and the demo miniapp server, wired to one another.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import {
  SANDBOX_HOSTAPP,
  SANDBOX_MINIAPP,
  sandboxRegistry,
  startSandbox,
  type RunningSandbox,
} from '../../src/tools/sandbox/startSandbox.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';
import type { Product } from './catalogue.js';
import { createDemoMiniapp, type DemoMiniapp } from './server.js';

export interface DemoStackOptions {
  /** Ports of the platform, the sandbox host app and the demo miniapp; 0 (the default) picks free ones. */
  ports?: { platform?: number; hostapp?: number; miniapp?: number };
  catalogue?: readonly Product[];
  logLevel?: string;
}

export interface DemoStack {
  platform: RunningPlatform;
  sandbox: RunningSandbox;
  demo: DemoMiniapp;
  /** The demo miniapp page. */
  miniappUrl: string;
  /** The host-app simulator with the demo miniapp open in it. */
  simulatorUrl: string;
  close(): Promise<void>;
}

export async function startDemoStack(options: DemoStackOptions = {}): Promise<DemoStack> {
  const host = '127.0.0.1';
  let platformUrl = '';
  const sandbox = await startSandbox({ platformUrl: () => platformUrl, hostappPort: options.ports?.hostapp ?? 0, miniappPort: 0, host });
  const demo = createDemoMiniapp({
    platformUrl: () => platformUrl,
    appId: SANDBOX_MINIAPP.appId,
    secretKey: SANDBOX_MINIAPP.secretKey,
    clientId: SANDBOX_HOSTAPP.clientId,
    catalogue: options.catalogue,
  });
  const demoServer = await new Promise<Server>((resolve, reject) => {
    const server = demo.app.listen(options.ports?.miniapp ?? 0, host, (error?: Error) => (error ? reject(error) : resolve(server)));
  });
  const miniappUrl = `http://${host}:${(demoServer.address() as AddressInfo).port}`;
  // The sandbox's miniapp registration, pointed at the demo server: E6 and E7 go there.
  const registry = registryFrom(sandboxRegistry(sandbox.hostappUrl, miniappUrl));
  const platform = await startPlatform({
    registry,
    config: {
      port: options.ports?.platform ?? 0,
      host,
      dataDir: 'memory://',
      databaseUrl: undefined,
      logLevel: options.logLevel ?? 'silent',
    },
  });
  platformUrl = platform.url;
  return {
    platform,
    sandbox,
    demo,
    miniappUrl: `${miniappUrl}/`,
    simulatorUrl: `${sandbox.hostappUrl}/simulator/?${new URLSearchParams({ miniapp: `${miniappUrl}/` })}`,
    close: async () => {
      await platform.close();
      await sandbox.close();
      await new Promise<void>((resolve) => {
        demoServer.close(() => resolve());
        demoServer.closeAllConnections();
      });
    },
  };
}
