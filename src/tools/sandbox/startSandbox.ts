import type { PartnerKitLogger } from '../../shipped/partner-kit/index.js';
import type { RegistryFile } from '../../platform/registry/loadRegistry.js';
import { createSandboxHostapp, type SandboxHostapp } from './sandboxHostapp.js';
import { listen, type Listening } from './http.js';
import { createSandboxMiniapp, type MiniappReceived } from './sandboxMiniapp.js';
import { sampleIds } from './sampleIds.js';
import sandboxRegistryFile from './registry.json' with { type: 'json' };

/** The checked-in sandbox registry (src/tools/sandbox/registry.json), for the default ports. */
const REGISTRY: RegistryFile = sandboxRegistryFile as RegistryFile;
const HOSTAPP = REGISTRY.hostapps[0];
const MINIAPP = REGISTRY.miniapps[0];

/** The sandbox partners and their sandbox-only credentials, read from the registry file. */
export const SANDBOX_HOSTAPP = {
  clientId: HOSTAPP.client_id,
  secretKey: HOSTAPP.secret_key as string,
  tokenPrefix: HOSTAPP.token_prefix ?? 'Token',
};
export const SANDBOX_MINIAPP = { appId: MINIAPP.app_id, secretKey: MINIAPP.secret_key as string };
export const DEFAULT_HOSTAPP_PORT = Number(new URL(HOSTAPP.urls!.create_order_payment!).port);
export const DEFAULT_MINIAPP_PORT = Number(new URL(MINIAPP.urls!.complete_order!).port);
/** Where `npm start` serves the demo miniapp's page (MINIBRIDGE_SANDBOX_DEMO_PORT). */
export const DEFAULT_DEMO_MINIAPP_PORT = 8083;
/** The admin token of sandbox mode when MINIBRIDGE_ADMIN_TOKEN is not set: sandbox-only, public. */
export const SANDBOX_ADMIN_TOKEN = 'sandbox-admin-token';
/** The signing secrets the sandbox partners use when started with `signing: true` (sandbox-only, public). */
/** The host app's in the Standard Webhooks form; the miniapp's as registered before it (its key is its UTF-8 bytes, ADR 0019). */
export const SANDBOX_SIGNING_SECRETS = {
  hostapp: ['whsec_c2FuZGJveC1ob3N0YXBwLXNpZ25pbmcta2V5LTMyYnk='],
  miniapp: ['sandbox-miniapp-signing-secret'],
};

export interface SandboxOptions {
  /** The platform's address, or a function giving it once the platform listens (in-process starts). */
  platformUrl: string | (() => string);
  /** Default 8081; 0 picks a free port. */
  hostappPort?: number;
  /** Default 8082; 0 picks a free port. */
  miniappPort?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Confirm every new payment by itself after this many milliseconds (magic amounts apply). */
  autoConfirmMs?: number;
  /** Turn request signing on for both sandbox partners, in the registry and in the simulated servers. */
  signing?: boolean;
  /**
   * Also serve the demo miniapp (examples/demo-miniapp) on this port (0 picks a free one) as the
   * sandbox miniapp's page: the host-app simulator opens it by default, and the E6 callbacks the
   * sandbox miniapp server receives reach it too. Off unless given.
   */
  demoMiniappPort?: number;
  logger?: PartnerKitLogger;
}

export interface RunningSandbox {
  /** The registry for the platform (pass it to registryFrom): the sandbox partners at the ports in use. */
  registry: RegistryFile;
  hostappUrl: string;
  miniappUrl: string;
  /** The demo miniapp's page, when started with `demoMiniappPort`. */
  demoMiniappUrl?: string;
  /** The browser host-app simulator (with the demo miniapp open in it when there is one). */
  simulatorUrl: string;
  /** The bridge conformance page (open it in a host app; its runs are at `${miniappUrl}/sandbox/bridge-runs`). */
  bridgeConformanceUrl: string;
  /** What the simulated miniapp server received (E6 callbacks, E7 events), live. */
  received: MiniappReceived;
  /** The simulated host app: its payments, the events it received, and the confirm/cancel/fail actions. */
  hostapp: Pick<SandboxHostapp, 'payments' | 'events' | 'act'>;
  close(): Promise<void>;
}

/**
 * Starts the simulated host app and miniapp servers (built with the partner kit) and returns
 * the registry that points the platform at them. Start the platform with that registry; the
 * partners call it at `platformUrl`.
 */
export async function startSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  const platformUrl = typeof options.platformUrl === 'string' ? () => options.platformUrl as string : options.platformUrl;
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? silentWarnings;
  const signing = options.signing ?? false;

  let demoMiniappUrl: string | undefined;
  const demo = options.demoMiniappPort === undefined ? undefined : await createSandboxDemo(platformUrl, logger);
  const hostapp = createSandboxHostapp({
    ...SANDBOX_HOSTAPP,
    miniappId: SANDBOX_MINIAPP.appId,
    signingSecrets: signing ? SANDBOX_SIGNING_SECRETS.hostapp : [],
    platformUrl,
    autoConfirmMs: options.autoConfirmMs,
    defaultMiniappUrl: () => demoMiniappUrl,
    // The docs' E1 sample creates the payment the other samples name (ADR 0043).
    pinnedOrderPaymentId: (appId, miniappOrderId) =>
      appId === SANDBOX_MINIAPP.appId && miniappOrderId === sampleIds().miniappOrderId ? sampleIds().orderPaymentId : undefined,
    logger,
  });
  const miniapp = createSandboxMiniapp({
    ...SANDBOX_MINIAPP,
    hostappId: SANDBOX_HOSTAPP.clientId,
    signingSecrets: signing ? SANDBOX_SIGNING_SECRETS.miniapp : [],
    platformUrl,
    logger,
    ...(demo && { onOrderCompletion: demo.recordCompletion }),
  });
  const hostappServer = await listen(hostapp.app, options.hostappPort ?? DEFAULT_HOSTAPP_PORT, host);
  const servers: Listening[] = [hostappServer];
  const closeAll = () => Promise.all(servers.map((server) => server.close()));
  try {
    servers.push(await listen(miniapp.app, options.miniappPort ?? DEFAULT_MINIAPP_PORT, host));
    if (demo) {
      const demoServer = await listen(demo.app, options.demoMiniappPort ?? 0, host);
      servers.push(demoServer);
      demoMiniappUrl = `${demoServer.url}/`;
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  const miniappServer = servers[1]!;

  return {
    registry: sandboxRegistry(hostappServer.url, miniappServer.url, signing),
    hostappUrl: hostappServer.url,
    miniappUrl: miniappServer.url,
    ...(demoMiniappUrl !== undefined && { demoMiniappUrl }),
    simulatorUrl: `${hostappServer.url}/simulator/${demoMiniappUrl === undefined ? '' : `?${new URLSearchParams({ miniapp: demoMiniappUrl })}`}`,
    bridgeConformanceUrl: `${miniappServer.url}/bridge-conformance/`,
    received: miniapp.received,
    hostapp: { payments: hostapp.payments, events: hostapp.events, act: hostapp.act },
    close: async () => {
      hostapp.close();
      await closeAll();
    },
  };
}

/** The demo miniapp as the sandbox miniapp's page: the sandbox miniapp's credentials, the sandbox host app. */
async function createSandboxDemo(platformUrl: () => string, logger: PartnerKitLogger) {
  const { createDemoMiniapp } = await import('../../../examples/demo-miniapp/server.js');
  return createDemoMiniapp({
    platformUrl,
    appId: SANDBOX_MINIAPP.appId,
    secretKey: SANDBOX_MINIAPP.secretKey,
    clientId: SANDBOX_HOSTAPP.clientId,
    logger,
  });
}

/** The checked-in registry with each partner URL moved to the address its simulator listens on. */
export function sandboxRegistry(hostappUrl: string, miniappUrl: string, signing = false): RegistryFile {
  const registry = structuredClone(REGISTRY);
  const rebase = (url: string | undefined, origin: string) =>
    url === undefined ? undefined : new URL(new URL(url).pathname, origin).toString();
  for (const registration of registry.hostapps) {
    for (const [name, url] of Object.entries(registration.urls ?? {}))
      (registration.urls as Record<string, string | undefined>)[name] = rebase(url, hostappUrl);
    if (signing) registration.signing = { enabled: true, secrets: SANDBOX_SIGNING_SECRETS.hostapp };
  }
  for (const registration of registry.miniapps) {
    for (const [name, url] of Object.entries(registration.urls ?? {}))
      (registration.urls as Record<string, string | undefined>)[name] = rebase(url, miniappUrl);
    if (signing) registration.signing = { enabled: true, secrets: SANDBOX_SIGNING_SECRETS.miniapp };
  }
  return registry;
}

/** Refusals (warn) are expected in a sandbox that is being poked at; failures are not. */
const silentWarnings: PartnerKitLogger = {
  warn: () => {},
  error: (details, message) => console.error(`[minibridge sandbox] ${message}`, details),
};
