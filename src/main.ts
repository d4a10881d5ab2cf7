/**
 * `npm start`. With MINIBRIDGE_REGISTRY set, the platform alone (production). Without it (or with
 * `--sandbox`, `npm run sandbox`), the sandbox: simulated host app and miniapp servers and the
 * platform wired to them with embedded PGlite, ready for curl. SIGTERM/SIGINT close everything
 * gracefully and exit 0.
 */
// Only what opens the database is imported up front: PGlite boots (about half a second, much of
// it compiling WebAssembly off the main thread) while the rest of the code loads.
import { isIP } from 'node:net';
import { configFromEnv } from './platform/config.js';
import type * as SandboxModule from './tools/sandbox/startSandbox.js';
import type { RunningSandbox } from './tools/sandbox/startSandbox.js';
import type { RunningPlatform } from './platform/server.js';
import { openStore } from './platform/store/index.js';
import { sandboxPinnedIds } from './tools/sandbox/sampleIds.js';

async function main(): Promise<void> {
  const env = process.env;
  const sandboxMode = process.argv.includes('--sandbox') || !env.MINIBRIDGE_REGISTRY;
  const closers: Array<() => Promise<void>> = [];
  const shutdown = onceOnly(async (signal: string) => {
    // The platform first: it finishes requests in flight, which may still call the sandbox partners.
    for (const close of closers) await close();
    process.stdout.write(`minibridge: stopped (${signal})\n`);
    process.exit(0);
  });
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // Without the registry path: the sandbox's own configuration, and the database settings of both modes.
  const config = configFromEnv({ ...env, MINIBRIDGE_REGISTRY: '' });
  const store = openStore(
    { databaseUrl: config.databaseUrl, pgliteDataDir: config.dataDir, timeouts: config.databaseTimeouts },
    {
      idempotencyKeyTtlMs: config.retention.idempotency_keys * 86_400_000,
      // The sandbox gives what the docs' request samples create the ids the samples name (ADR 0043).
      ...(sandboxMode ? { pinnedIds: sandboxPinnedIds() } : {}),
    },
  );
  // A failure is reported where startPlatform awaits it.
  store.catch(() => undefined);
  const { createLogger, startPlatform } = await import('./platform/server.js');

  if (!sandboxMode) {
    // Production seals partner secrets at rest: with the published development key they would be
    // readable by anyone holding a copy of the database (ADR 0027), so it does not start without one.
    if (!config.secretsKey) {
      await store.then((opened) => opened.close()).catch(() => undefined);
      throw new Error('MINIBRIDGE_SECRETS_KEY is required with MINIBRIDGE_REGISTRY (32 bytes in base64: openssl rand -base64 32)');
    }
    const platform = await startPlatform({ store });
    closers.push(platform.close);
    return;
  }

  const [{ registryFrom }, sandboxModule, { isLoopbackHost }] = await Promise.all([
    import('./platform/registry/loadRegistry.js'),
    import('./tools/sandbox/startSandbox.js'),
    import('./platform/outbound/addressPolicy.js'),
  ]);
  const { DEFAULT_DEMO_MINIAPP_PORT, DEFAULT_HOSTAPP_PORT, DEFAULT_MINIAPP_PORT, SANDBOX_ADMIN_TOKEN, startSandbox } = sandboxModule;

  config.adminToken ??= SANDBOX_ADMIN_TOKEN;
  const log = createLogger(config.logLevel);
  // The sandbox's secrets and admin token are published in the README: it listens on loopback
  // unless HOST says otherwise (ADR 0015), and says which at start-up.
  config.host = sandboxHost(env.HOST);
  // `localhost` or a loopback address literal: a name that merely starts with 127. may resolve anywhere.
  if (config.host.toLowerCase() === 'localhost' || (isIP(config.host) !== 0 && isLoopbackHost(config.host))) {
    // Only this machine can reach it: a partner signed in may point it at its own local server (ADR 0043).
    config.sandboxLoopback = true;
    log.info({ host: config.host }, `sandbox mode listens on ${config.host} only (loopback); set HOST to listen elsewhere`);
  } else {
    log.warn(
      { host: config.host },
      `sandbox mode listens on ${config.host} (HOST): anyone who can reach this machine can use its published secrets and admin token`,
    );
  }
  let platformUrl: string | undefined;
  const sandbox = await startSandbox({
    platformUrl: () => platformUrl ?? `http://127.0.0.1:${config.port}`,
    hostappPort: port(env.MINIBRIDGE_SANDBOX_HOSTAPP_PORT, DEFAULT_HOSTAPP_PORT),
    miniappPort: port(env.MINIBRIDGE_SANDBOX_MINIAPP_PORT, DEFAULT_MINIAPP_PORT),
    demoMiniappPort: port(env.MINIBRIDGE_SANDBOX_DEMO_PORT, DEFAULT_DEMO_MINIAPP_PORT),
    host: config.host,
    autoConfirmMs: duration('MINIBRIDGE_SANDBOX_AUTO_CONFIRM_MS', env.MINIBRIDGE_SANDBOX_AUTO_CONFIRM_MS),
    logger: { warn: (details, message) => log.warn(details, message), error: (details, message) => log.error(details, message) },
  });
  let platform: RunningPlatform;
  try {
    platform = await startPlatform({ registry: registryFrom(sandbox.registry, env, 'sandbox registry'), config, log, store });
  } catch (error) {
    await sandbox.close();
    throw error;
  }
  platformUrl = platform.url;
  closers.push(platform.close, sandbox.close);
  const { magicAmountsLines } = await import('./tools/sandbox/magicAmounts.js');
  const described = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite at ${config.dataDir}`;
  process.stdout.write(banner(platform.url, sandbox, described, config.adminToken, sandboxModule, magicAmountsLines()));
}

function banner(
  platformUrl: string,
  sandbox: RunningSandbox,
  database: string,
  adminToken: string,
  { SANDBOX_HOSTAPP, SANDBOX_MINIAPP }: typeof SandboxModule,
  magicAmounts: string,
): string {
  const e1 = JSON.stringify({
    app_id: SANDBOX_MINIAPP.appId,
    client_id: SANDBOX_HOSTAPP.clientId,
    order: { currency: 'VND', amount: '125000', miniapp_order_id: 'ORD-2001' },
  });
  return `
Minibridge sandbox (simulated partners; every secret below is sandbox-only)
  Platform   ${platformUrl}   docs ${platformUrl}/docs   dashboard ${platformUrl}/dashboard/   admin token ${adminToken}
  Host app   ${sandbox.hostappUrl}   client_id ${SANDBOX_HOSTAPP.clientId}   secret_key ${SANDBOX_HOSTAPP.secretKey}   (Authorization prefix ${SANDBOX_HOSTAPP.tokenPrefix})
  Miniapp    ${sandbox.miniappUrl}   app_id ${SANDBOX_MINIAPP.appId}   secret_key ${SANDBOX_MINIAPP.secretKey}
  Demo page  ${sandbox.demoMiniappUrl ?? '-'}   (the demo miniapp, examples/demo-miniapp)
  Simulator  ${sandbox.simulatorUrl}   (the host app in a browser, the demo miniapp inside)
  Bridge     ${sandbox.bridgeConformanceUrl}?run=<name>   (open it in your host app, then: npx minibridge verify bridge --url ${sandbox.miniappUrl} --run <name>)
  Database   ${database}

Create an order payment (E1) as the miniapp:
  curl -s ${platformUrl}/api/v1/orders/create-order-payment/ -u ${SANDBOX_MINIAPP.appId}:${SANDBOX_MINIAPP.secretKey} -H 'Content-Type: application/json' -d '${e1}'
Complete it at the host app (calls E5; the miniapp then gets E6):
  curl -s -X POST ${sandbox.hostappUrl}/sandbox/payments/<order_payment_id>/confirm
See what the miniapp received:
  curl -s ${sandbox.miniappUrl}/sandbox/received

Magic amounts (order.amount):
${magicAmounts}

`;
}

/** Where the sandbox listens: HOST when given, else loopback. */
function sandboxHost(host: string | undefined): string {
  return host === undefined || host === '' ? '127.0.0.1' : host;
}

function port(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) throw new Error(`expected a port number, got ${value}`);
  return parsed;
}

/** The longest delay setTimeout keeps; a longer one fires at once (with a warning) instead. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** A duration in whole milliseconds, or undefined when the variable is unset (the feature is off). */
function duration(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed > LONGEST_TIMER_MS) {
    throw new Error(
      `${name} must be a whole number of milliseconds from 0 to ${LONGEST_TIMER_MS} (e.g. 2000 for 2 s), not ${JSON.stringify(value)}`,
    );
  }
  return parsed;
}

function onceOnly<T>(run: (argument: T) => Promise<void>): (argument: T) => Promise<void> {
  let running: Promise<void> | undefined;
  return (argument) => (running ??= run(argument));
}

main().catch((error: unknown) => {
  process.stderr.write(`minibridge: cannot start: ${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
