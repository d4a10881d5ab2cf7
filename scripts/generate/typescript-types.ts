import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ApiEntry } from '../lib/apis.js';
import { artefactDirs } from '../lib/paths.js';
import { runToolOrThrow } from '../lib/run-tool.js';
import { bundlePath } from './openapi-bundles.js';

/**
 * Runs openapi-typescript on OpenAPI files. It reads ./redocly.yaml by default and then ignores
 * the input file argument, so it gets an empty config of its own; the sources are linted apart.
 */
export async function runOpenapiTypescript(jobs: ReadonlyArray<{ input: string; output: string }>): Promise<void> {
  const configDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-openapi-ts-'));
  const emptyConfig = path.join(configDir, 'redocly.yaml');
  try {
    await writeFile(emptyConfig, '{}\n');
    // --empty-objects-unknown: an allOf branch that only adds `required` must not become
    // Record<string, never>, which would make every property of the intersection `never`.
    const flags = ['--redocly', emptyConfig, '--empty-objects-unknown'];
    await Promise.all(jobs.map((job) => runToolOrThrow('openapi-typescript', [job.input, '-o', job.output, ...flags])));
  } finally {
    await rm(configDir, { recursive: true, force: true });
  }
}

/** The TypeScript types of each API, from its bundled JSON. */
export async function generateApiTypes(apis: readonly ApiEntry[], outRoot: string): Promise<void> {
  await runOpenapiTypescript(apis.map((api) => ({ input: bundlePath(outRoot, api, 'json'), output: typesPath(outRoot, api.name) })));
}

export function typesPath(outRoot: string, name: string): string {
  return path.join(outRoot, artefactDirs.types, `${name}.ts`);
}
