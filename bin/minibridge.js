#!/usr/bin/env node
// The `minibridge` command. In a checkout it runs the TypeScript sources through tsx; an
// installed package without them runs the compiled dist/ instead.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const source = fileURLToPath(new URL('../src/shipped/cli.ts', import.meta.url));
let cli;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(pathToFileURL(source).href);
} else {
  cli = await import(new URL('../dist/src/shipped/cli.js', import.meta.url).href);
}
process.exitCode = await cli.main(process.argv.slice(2));
