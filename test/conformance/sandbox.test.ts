import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableReport, verify } from '../../src/shipped/conformance/index.js';
import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import {
  SANDBOX_HOSTAPP,
  SANDBOX_MINIAPP,
  SANDBOX_SIGNING_SECRETS,
  startSandbox,
  type RunningSandbox,
} from '../../src/tools/sandbox/startSandbox.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';

const hostapp = { id: SANDBOX_HOSTAPP.clientId, secret: SANDBOX_HOSTAPP.secretKey };
const miniapp = { id: SANDBOX_MINIAPP.appId, secret: SANDBOX_MINIAPP.secretKey };
const common = { tokenPrefix: SANDBOX_HOSTAPP.tokenPrefix, paths: {}, e4Method: 'POST' as const };

describe('the sandbox partners and a platform with the sandbox registry conform', { timeout: 60_000 }, () => {
  let sandbox: RunningSandbox;
  let platform: RunningPlatform;
  beforeAll(async () => {
    sandbox = await startSandbox({ platformUrl: () => platform.url, hostappPort: 0, miniappPort: 0 });
    platform = await startPlatform({
      registry: registryFrom(sandbox.registry),
      config: { port: 0, host: '127.0.0.1', dataDir: 'memory://', databaseUrl: undefined, logLevel: 'silent' },
    });
  }, 60_000);
  afterAll(async () => {
    await platform?.close();
    await sandbox?.close();
  });

  it('verify hostapp passes against the sandbox host app', async () => {
    const report = await verify({
      ...common,
      subject: 'hostapp',
      url: sandbox.hostappUrl,
      credentials: hostapp,
      appId: miniapp.id,
      signingSecrets: [],
    });
    expect(report.passed, tableReport(report)).toBe(true);
  });

  it('verify miniapp passes against the sandbox miniapp', async () => {
    const report = await verify({
      ...common,
      subject: 'miniapp',
      url: sandbox.miniappUrl,
      credentials: miniapp,
      clientId: hostapp.id,
      signingSecrets: [],
    });
    expect(report.passed, tableReport(report)).toBe(true);
  });

  it('verify platform passes against Minibridge with the sandbox registry', async () => {
    const report = await verify({
      ...common,
      subject: 'platform',
      url: platform.url,
      credentials: miniapp,
      hostappCredentials: hostapp,
      signingSecrets: [],
    });
    expect(report.passed, tableReport(report)).toBe(true);
  });
});

describe('the sandbox host app with request signing', { timeout: 60_000 }, () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ platformUrl: 'http://127.0.0.1:9', hostappPort: 0, miniappPort: 0, signing: true });
  });
  afterAll(() => sandbox?.close());

  it('passes with signed requests, and refuses a bad signature', async () => {
    const report = await verify({
      ...common,
      subject: 'hostapp',
      url: sandbox.hostappUrl,
      credentials: hostapp,
      appId: miniapp.id,
      signingSecrets: SANDBOX_SIGNING_SECRETS.hostapp,
    });
    expect(report.passed, tableReport(report)).toBe(true);
    // Wrong secret, no Authorization, every signature with another secret, webhook-signature alone with another secret.
    expect(report.results.find((result) => result.check === 'auth' && result.operationId === 'createHostappOrderPayment')?.requests).toBe(
      4,
    );
  });
});
