/**
 * npm run check:breaking: fails when generated/openapi/<api>.json breaks a client of the released
 * contract in openapi/baseline/<api>.json (optic). Run npm run build first.
 */
import path from 'node:path';
import { listApis } from './lib/apis.js';
import { checkBreakingChanges } from './lib/breaking-changes.js';
import { artefactDirs, baselineDir, generatedDir } from './lib/paths.js';

const results = await checkBreakingChanges(listApis(), baselineDir, path.join(generatedDir, artefactDirs.openapi));
for (const result of results) {
  const mark = result.outcome === 'breaking' ? '✘' : '✔';
  console.log(`${mark} ${result.api}: ${result.outcome === 'no-baseline' ? 'not released yet (no baseline)' : result.outcome}`);
  if (result.outcome === 'breaking') console.log(result.report);
}
if (results.some((result) => result.outcome === 'breaking')) {
  console.error(
    'Breaking changes: v1 only grows additively (docs/decisions/0011-versioning-and-deprecation.md). Undo them, or design them as /api/v2/.',
  );
  process.exit(1);
}
