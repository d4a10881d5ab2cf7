import path from 'node:path';
import type { ApiEntry } from '../lib/apis.js';
import { artefactDirs } from '../lib/paths.js';
import { runToolOrThrow } from '../lib/run-tool.js';

const formats = ['yaml', 'json'] as const;

/** Bundles each API into one YAML and one JSON document (components named after their files). */
export async function bundleOpenApi(apis: readonly ApiEntry[], outRoot: string): Promise<void> {
  const jobs = apis.flatMap((api) =>
    formats.map((format) => runToolOrThrow('redocly', ['bundle', api.alias, '-o', bundlePath(outRoot, api, format)])),
  );
  await Promise.all(jobs);
}

export function bundlePath(outRoot: string, api: ApiEntry, format: (typeof formats)[number]): string {
  return path.join(outRoot, artefactDirs.openapi, `${api.name}.${format}`);
}
