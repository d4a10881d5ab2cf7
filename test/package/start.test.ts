/**
 * `npm start` (scripts/start.mjs) runs the compiled dist/ only while it is as new as what it was
 * compiled from, so an edit under src/ or generated/types/ is never hidden by a stale build.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { compiledIsCurrent as current } from '../../scripts/lib/compiled-is-current.mjs';
let root: string;

function tree(builtAtSeconds: number | undefined, sources: Record<string, number>): string {
  root = mkdtempSync(join(os.tmpdir(), 'minibridge-start-'));
  for (const [file, seconds] of Object.entries(sources)) {
    const path = join(root, file);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '');
    utimesSync(path, seconds, seconds);
  }
  if (builtAtSeconds !== undefined) {
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(join(root, 'dist', '.built'), '');
    utimesSync(join(root, 'dist', '.built'), builtAtSeconds, builtAtSeconds);
  }
  return root;
}

afterEach(() => rmSync(root, { recursive: true, force: true }));

const sources = { 'src/main.ts': 1_000, 'src/platform/server.ts': 1_000, 'generated/types/platform.ts': 1_000 };

test('a build newer than every source is run', () => {
  expect(current(tree(2_000, sources))).toBe(true);
});

test('no build, or one that did not finish (no stamp), is not run', () => {
  expect(current(tree(undefined, sources))).toBe(false);
});

test('a source edited after the build, at any depth, in src/ or generated/types/, sends npm start to the sources', () => {
  expect(current(tree(2_000, { ...sources, 'src/platform/server.ts': 3_000 }))).toBe(false);
  rmSync(root, { recursive: true, force: true });
  expect(current(tree(2_000, { ...sources, 'generated/types/platform.ts': 3_000 }))).toBe(false);
});
