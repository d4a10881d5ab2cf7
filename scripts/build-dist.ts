/**
 * Compiles src/ and generated/types/ into dist/, the compiled platform `npm start` runs (ADR 0034).
 * Part of `npm run build` and of the root's `prepare`; the packages partners install are built by
 * build-packages.ts (ADR 0042). Always a fresh dist/
 * built from the committed generated/ tree.
 */
import { cp, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourcesDigest } from './lib/compiled-is-current.mjs';
import { repoRoot } from './lib/paths.js';
import { runToolOrThrow } from './lib/run-tool.js';

/**
 * Built beside dist/ and swapped in whole: a platform that `npm start` launches from dist/ while
 * `npm pack` rebuilds it (the test suites run side by side, ADR 0044) never loads a half-written
 * tree. A sibling folder, so source maps' relative paths are those of dist/ itself.
 */
export async function buildDist(): Promise<void> {
  const dist = path.join(repoRoot, 'dist');
  const next = path.join(repoRoot, `dist.next-${process.pid}`);
  const old = path.join(repoRoot, `dist.old-${process.pid}`);
  await rm(next, { recursive: true, force: true });
  try {
    await runToolOrThrow('tsc', ['-p', 'tsconfig.build.json', '--outDir', next]);
    // tsc copies no SQL: the store's migrations travel next to the compiled migrate.js.
    await cp(path.join(repoRoot, 'src/platform/store/migrations'), path.join(next, 'src/platform/store/migrations'), {
      recursive: true,
    });
    // `npm start` (scripts/start.mjs) runs dist/ only while the sources still have this digest.
    await writeFile(path.join(next, '.built'), `${sourcesDigest(repoRoot)}\n`);
    await rename(dist, old).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(next, dist);
  } finally {
    await rm(next, { recursive: true, force: true });
    await rm(old, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildDist();
  console.log('dist/: compiled');
}
