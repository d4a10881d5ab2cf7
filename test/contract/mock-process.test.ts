import { spawn } from 'node:child_process';
import { describe, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';

// `npm run mock:<api>` as a developer runs it: the mock must stop with npm, whether npm passes a
// signal on or dies without one (SIGKILL), and never keep serving the port.

async function startMockThroughNpm(): Promise<{ npmPid: number; url: string }> {
  const child = spawn('npm', ['run', 'mock:platform', '--', '--port', '0'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the mock did not start:\n${output}`)), 90_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving the platform API contract at (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`npm exited (${code}) before the mock served:\n${output}`)));
  });
  return { npmPid: child.pid!, url };
}

async function answers(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
    () => true,
    () => false,
  );
}

// Three mocks of their own (each on a free port), started and stopped side by side (ADR 0044).
describe.concurrent('npm run mock:platform', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    it(`stops serving when npm gets ${signal}`, async ({ expect }) => {
      const { npmPid, url } = await startMockThroughNpm();
      expect(await answers(url)).toBe(true);
      process.kill(npmPid, signal);
      await expect.poll(() => answers(url), { timeout: 15_000, interval: 250 }).toBe(false);
    }, 120_000);
  }
});
