/**
 * `npm start`: the compiled platform in dist/ when it was built from exactly the sources there now,
 * otherwise the TypeScript sources through tsx. `npm ci` builds dist/ (the `prepare` script), so a
 * fresh clone's first start runs compiled code and does not compile ~200 modules on the fly
 * (about 1.5 s and 70 MiB of the first start, bench/results/history.md). After an edit under src/ or
 * generated/types/, the sources run as they are, with no stale build and no build step to remember.
 * Plain JavaScript, so deciding costs no TypeScript compiler.
 */
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledIsCurrent } from './lib/compiled-is-current.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

if (compiledIsCurrent(root)) {
  await import(pathToFileURL(join(root, 'dist', 'src', 'main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'main.ts')).href);
}
