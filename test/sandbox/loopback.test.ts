/**
 * `npm start` in sandbox mode listens on loopback unless HOST says otherwise, and says so at
 * start-up (ADR 0015): its secrets and admin token are published in the README.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';

const START_TIMEOUT_MS = 90_000;

/** `npm start` in sandbox mode on a fresh data directory, with HOST as given (absent when undefined). */
function startSandbox(host: string | undefined) {
  const dataDir = mkdtempSync(join(tmpdir(), 'minibridge-loopback-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MINIBRIDGE_REGISTRY: '',
    PORT: '0',
    MINIBRIDGE_SANDBOX_HOSTAPP_PORT: '0',
    MINIBRIDGE_SANDBOX_MINIAPP_PORT: '0',
    MINIBRIDGE_DATA_DIR: join(dataDir, 'pglite'),
    DATABASE_URL: '',
    LOG_LEVEL: 'info',
  };
  if (host === undefined) delete env.HOST;
  else env.HOST = host;
  const child = spawn('npm', ['start', '--silent'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const sandbox = {
    child,
    output: '',
    exited: new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  child.stdout.on('data', (chunk) => (sandbox.output += chunk));
  child.stderr.on('data', (chunk) => (sandbox.output += chunk));
  return sandbox;
}

it(
  'npm start without HOST listens on 127.0.0.1 only and logs it',
  async () => {
    const sandbox = startSandbox(undefined);
    try {
      await vi.waitFor(() => expect(sandbox.output).toMatch(/Platform +http:\/\/\S+/), { timeout: START_TIMEOUT_MS, interval: 200 });
      const listening = sandbox.output.split('\n').find((line) => line.includes('sandbox mode listens on'));
      expect(listening).toBeDefined();
      expect(JSON.parse(listening!)).toMatchObject({ level: 30, host: '127.0.0.1' });
      const platformUrl = /Platform +(http:\/\/\S+)/.exec(sandbox.output)![1]!;
      expect(new URL(platformUrl).hostname).toBe('127.0.0.1');
      expect(/Host app +(http:\/\/\S+)/.exec(sandbox.output)?.[1]).toMatch(/^http:\/\/127\.0\.0\.1:/);
      expect((await fetch(`${platformUrl}/healthz`)).status).toBe(200);
      sandbox.child.kill('SIGTERM');
      expect(await sandbox.exited).toBe(0);
    } finally {
      sandbox.stop();
    }
  },
  START_TIMEOUT_MS * 2,
);

it(
  'a HOST that only looks like loopback (a name starting 127.) is warned about, never taken as loopback',
  async () => {
    const sandbox = startSandbox('127.0.0.1.invalid');
    try {
      // The name resolves nowhere, so the start then fails; what it said about the address comes first.
      await vi.waitFor(() => expect(sandbox.output).toMatch(/sandbox mode listens on 127\.0\.0\.1\.invalid/), {
        timeout: START_TIMEOUT_MS,
        interval: 200,
      });
      const line = sandbox.output.split('\n').find((text) => text.includes('sandbox mode listens on'))!;
      expect(JSON.parse(line)).toMatchObject({ level: 40, host: '127.0.0.1.invalid' });
      expect(line).not.toMatch(/only \(loopback\)/);
    } finally {
      sandbox.stop();
    }
  },
  START_TIMEOUT_MS * 2,
);
