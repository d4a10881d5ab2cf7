#!/usr/bin/env node
// The `minibridge` command of @minibridge/verify (ADR 0042). In the repository this folder is a
// workspace holding the TypeScript sources (its tarball holds only dist/ and bin/), so the sources
// run through tsx and a stale dist/ is never used; installed, the compiled dist/ runs.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const inRepository = existsSync(fileURLToPath(new URL('../index.ts', import.meta.url)));
let cli;
if (inRepository) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(pathToFileURL(fileURLToPath(new URL('../../cli.ts', import.meta.url))).href);
} else {
  cli = await import(new URL('../dist/src/shipped/cli.js', import.meta.url).href);
}
process.exitCode = await cli.main(process.argv.slice(2));
