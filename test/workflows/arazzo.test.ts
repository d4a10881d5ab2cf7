import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { prefixedAuthorization } from '../../src/wire/authorization.js';
import { registryFrom } from '../../src/platform/registry/loadRegistry.js';
import { SANDBOX_HOSTAPP, SANDBOX_MINIAPP, startSandbox, type RunningSandbox } from '../../src/tools/sandbox/startSandbox.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';

/**
 * The Arazzo workflows beside the contract (openapi/workflows/) run by the Redocly CLI's
 * `respect` against the sandbox, started in-process on free ports: the same command a partner
 * runs against its own integration (docs/guides/workflows.md), with the servers overridden.
 */
const root = path.resolve(import.meta.dirname, '../..');
const workflowsDir = path.join(root, 'openapi', 'workflows');
const workflowFiles = readdirSync(workflowsDir).filter((name) => name.endsWith('.arazzo.yaml'));
/** Starting PGlite (WASM) takes seconds, far more on a busy machine; respect starts a CLI per file. */
const START_TIMEOUT_MS = 90_000;
const RUN_TIMEOUT_MS = 120_000;

let platform: RunningPlatform;
let sandbox: RunningSandbox;
const scratch = mkdtempSync(path.join(tmpdir(), 'minibridge-arazzo-'));

beforeAll(async () => {
  let platformUrl = '';
  sandbox = await startSandbox({ platformUrl: () => platformUrl, hostappPort: 0, miniappPort: 0 });
  platform = await startPlatform({
    registry: registryFrom(sandbox.registry),
    config: {
      port: 0,
      host: '127.0.0.1',
      dataDir: 'memory://',
      databaseUrl: undefined,
      logLevel: 'silent',
      worker: { pollMs: 50, batchSize: 10, leaseMs: 60_000, enabled: true },
    },
  });
  platformUrl = platform.url;
}, START_TIMEOUT_MS);

afterAll(async () => {
  await platform?.close();
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface RespectRun {
  code: number;
  output: string;
  report:
    { files?: Record<string, { totalRequests?: number; executedWorkflows?: Array<{ workflowId: string; status: string }> }> } | undefined;
}

/** Runs `redocly respect` on one workflow file with the sandbox's addresses and credentials. */
function respect(file: string): Promise<RespectRun> {
  const inputs = {
    app_id: SANDBOX_MINIAPP.appId,
    client_id: SANDBOX_HOSTAPP.clientId,
    miniapp_secret: SANDBOX_MINIAPP.secretKey,
    hostapp_authorization: prefixedAuthorization(SANDBOX_HOSTAPP.tokenPrefix, SANDBOX_HOSTAPP.clientId, SANDBOX_HOSTAPP.secretKey),
    run_id: randomUUID(),
  };
  const servers = { platform: platform.url, sandboxHostapp: sandbox.hostappUrl, sandboxMiniapp: sandbox.miniappUrl };
  const jsonOutput = path.join(scratch, `${file}.json`);
  const args = [
    'respect',
    path.join(workflowsDir, file),
    '--input',
    JSON.stringify(inputs),
    '--server',
    JSON.stringify(servers),
    '--json-output',
    jsonOutput,
    '--max-fetch-timeout',
    '15000',
    '--execution-timeout',
    String(RUN_TIMEOUT_MS - 10_000),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(root, 'node_modules', '.bin', 'redocly'), args, {
      cwd: root,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      let report: RespectRun['report'];
      try {
        report = JSON.parse(readFileSync(jsonOutput, 'utf8')) as RespectRun['report'];
      } catch {
        report = undefined;
      }
      resolve({ code: code ?? 1, output: Buffer.concat(chunks).toString('utf8'), report });
    });
  });
}

test('there are workflow files', () => {
  expect(workflowFiles.length).toBeGreaterThanOrEqual(2);
});

describe.each(workflowFiles.map((file) => [file]))('%s against the sandbox', (file) => {
  test(
    'every workflow succeeds',
    async () => {
      const run = await respect(file);
      expect(run.code, run.output).toBe(0);
      const workflows = Object.values(run.report?.files ?? {}).flatMap((entry) => entry.executedWorkflows ?? []);
      expect(workflows.length, run.output).toBeGreaterThan(0);
      for (const workflow of workflows)
        expect(`${workflow.workflowId}: ${workflow.status}`, run.output).toBe(`${workflow.workflowId}: success`);
    },
    RUN_TIMEOUT_MS,
  );
});
