import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { chromiumPackage, chromiumPath } from '../../scripts/lib/docs-browser.js';
import { repoRoot } from '../../scripts/lib/paths.js';

// `npm test`'s first step (ADR 0044): Chromium present, nothing happens; a Chromium it must not
// install stops the run with what to do, never a silent skip of the browser suites.

const run = promisify(execFile);
const script = path.join(repoRoot, 'scripts', 'ensure-chromium.ts');
const tsx = path.join(repoRoot, 'node_modules', '.bin', 'tsx');

async function ensure(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(tsx, [script], { env: { ...process.env, ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('ensure-chromium', () => {
  it('does nothing when Chromium is there', async () => {
    const result = await ensure({ CHROMIUM_PATH: chromiumPath });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('fails with what to do when CHROMIUM_PATH names nothing: it never installs over a path it was given', async () => {
    const result = await ensure({ CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('CHROMIUM_PATH=/nonexistent/chromium is not an executable file');
    expect(result.stderr).toContain(`apt-get install -y ${chromiumPackage}`);
    expect(result.stderr).toContain('never skipped');
  });
});
