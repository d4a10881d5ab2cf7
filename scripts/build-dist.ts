/**
 * Compiles src/ and generated/types/ into dist/, the compiled platform `npm start` runs (ADR 0034).
 * Part of `npm run build` and of the root's `prepare`; the packages partners install are built by
 * build-packages.ts (ADR 0042). Always a fresh dist/
 * built from the committed generated/ tree.
 */
import { cp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourcesDigest } from './lib/compiled-is-current.mjs';
import { repoRoot } from './lib/paths.js';
import { runToolOrThrow } from './lib/run-tool.js';

export async function buildDist(): Promise<void> {
  await rm(path.join(repoRoot, 'dist'), { recursive: true, force: true });
  await runToolOrThrow('tsc', ['-p', 'tsconfig.build.json']);
  // tsc copies no SQL: the store's migrations travel next to the compiled migrate.js.
  await cp(path.join(repoRoot, 'src/platform/store/migrations'), path.join(repoRoot, 'dist/src/platform/store/migrations'), {
    recursive: true,
  });
  // `npm start` (scripts/start.mjs) runs dist/ only while the sources still have this digest.
  await writeFile(path.join(repoRoot, 'dist', '.built'), `${sourcesDigest(repoRoot)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildDist();
  console.log('dist/: compiled');
}
