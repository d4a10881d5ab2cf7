/**
 * `npm start` with MINIBRIDGE_REGISTRY (production) refuses to start without MINIBRIDGE_SECRETS_KEY:
 * partner secrets would otherwise be sealed with the published development key (ADR 0027).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

it('npm start in production without MINIBRIDGE_SECRETS_KEY exits 1 naming the variable', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'minibridge-production-'));
  try {
    const registry = join(dir, 'registry.json');
    writeFileSync(registry, JSON.stringify({ hostapps: [], miniapps: [] }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MINIBRIDGE_REGISTRY: registry,
      PORT: '0',
      MINIBRIDGE_DATA_DIR: join(dir, 'pglite'),
      DATABASE_URL: '',
    };
    delete env.MINIBRIDGE_SECRETS_KEY;
    const outcome = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        'node',
        ['--import', 'tsx', 'src/main.ts'],
        { cwd: new URL('../..', import.meta.url).pathname, env, timeout: 90_000 },
        (error, _stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }),
      );
    });
    expect(outcome.stderr).toContain('MINIBRIDGE_SECRETS_KEY is required with MINIBRIDGE_REGISTRY');
    expect(outcome.code).toBe(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
