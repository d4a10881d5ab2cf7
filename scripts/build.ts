/**
 * npm run build: regenerates generated/ from openapi/ and docs/guides/, type-checks everything,
 * then compiles src/ and generated/types/ into dist/ for `npm start`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildDist } from './build-dist.js';
import { generateAll } from './generate/generate-all.js';
import { syncTree } from './lib/file-tree.js';
import { generatedDir } from './lib/paths.js';
import { typeCheck } from './lib/typecheck.js';

const started = performance.now();
const staging = await mkdtemp(path.join(os.tmpdir(), 'minibridge-build-'));
try {
  await generateAll(staging);
  const difference = await syncTree(staging, generatedDir);
  const updated = [...difference.missing, ...difference.changed];
  console.log(`generated/: ${updated.length} file(s) written, ${difference.extra.length} removed`);
  for (const file of updated) console.log(`  wrote   ${file}`);
  for (const file of difference.extra) console.log(`  removed ${file}`);
} finally {
  await rm(staging, { recursive: true, force: true });
}

const types = await typeCheck();
if (!types.ok) {
  console.error(`tsc --noEmit failed:\n${types.report}`);
  process.exit(1);
}
console.log('tsc --noEmit: no errors');

await buildDist();
console.log(`dist/: compiled; build took ${((performance.now() - started) / 1000).toFixed(1)} s`);
