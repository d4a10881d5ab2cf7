import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What dist/ is compiled from (tsconfig.build.json's include). */
const sources = ['src', join('generated', 'types')];

/**
 * Whether dist/ under `root` is complete and no newer than its sources: scripts/build-dist.ts
 * writes dist/.built last, and every file under the sources must be older than it.
 */
export function compiledIsCurrent(root) {
  const stamp = join(root, 'dist', '.built');
  if (!existsSync(stamp)) return false;
  const builtAt = statSync(stamp).mtimeMs;
  return sources.every((dir) => newestChange(join(root, dir)) <= builtAt);
}

function newestChange(dir) {
  if (!existsSync(dir)) return Infinity;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestChange(path) : statSync(path).mtimeMs);
  }
  return newest;
}
