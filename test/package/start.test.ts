/**
 * `npm start` (scripts/start.mjs) runs the compiled dist/ only while it was built from exactly the
 * sources there now, so an edit under src/ or generated/types/ is never hidden by a stale build,
 * even when the edited files carry older modification times than the build.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { compiledIsCurrent, sourcesDigest } from '../../scripts/lib/compiled-is-current.mjs';

let root: string;
const write = (file: string, text: string) => {
  mkdirSync(join(root, file, '..'), { recursive: true });
  writeFileSync(join(root, file), text);
};
const build = () => write('dist/.built', `${sourcesDigest(root)}\n`);

beforeEach(() => {
  root = mkdtempSync(join(os.tmpdir(), 'minibridge-start-'));
  write('src/main.ts', 'main');
  write('src/platform/server.ts', 'server');
  write('generated/types/platform.ts', 'types');
  write('tsconfig.json', '{}');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test('a build of exactly these sources is run', () => {
  build();
  expect(compiledIsCurrent(root)).toBe(true);
});

test('no build, or one that did not finish (no stamp), is not run', () => {
  expect(compiledIsCurrent(root)).toBe(false);
});

test('an edit at any depth of src/ or generated/types/, a new file or a compiler setting sends npm start to the sources', () => {
  build();
  write('src/platform/server.ts', 'server, edited');
  expect(compiledIsCurrent(root)).toBe(false);
  build();
  write('generated/types/hostapp.ts', 'new');
  expect(compiledIsCurrent(root)).toBe(false);
  build();
  write('tsconfig.json', '{"compilerOptions":{}}');
  expect(compiledIsCurrent(root)).toBe(false);
});

test("a package's build output under src/shipped/ is not a source: packing a package keeps the build current", () => {
  build();
  write('src/shipped/clients/dist/src/shipped/clients/index.js', 'compiled');
  expect(compiledIsCurrent(root)).toBe(true);
  write('src/shipped/clients/index.ts', 'edited');
  expect(compiledIsCurrent(root)).toBe(false);
});

test('an edited file with an old modification time (a copy that keeps times) is still seen', () => {
  build();
  write('src/main.ts', 'main, edited');
  utimesSync(join(root, 'src/main.ts'), 1_000, 1_000);
  expect(compiledIsCurrent(root)).toBe(false);
});
