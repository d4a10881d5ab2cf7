import { access } from 'node:fs/promises';
import path from 'node:path';
import type { ApiEntry } from '../lib/apis.js';
import { artefactDirs } from '../lib/paths.js';
import { runToolOrThrow } from '../lib/run-tool.js';

const formats = ['yaml', 'json'] as const;

/**
 * Bundles each API into one YAML and one JSON document (components named after their files):
 * one `redocly bundle` per format for all the APIs, each written into the folder under its root
 * file's name (a Redocly start costs more than bundling a document).
 */
export async function bundleOpenApi(apis: readonly ApiEntry[], outRoot: string): Promise<void> {
  const dir = path.join(outRoot, artefactDirs.openapi);
  await Promise.all(
    formats.map((format) => runToolOrThrow('redocly', ['bundle', ...apis.map((api) => api.alias), '-o', dir, '--ext', format])),
  );
  for (const api of apis)
    for (const format of formats)
      await access(bundlePath(outRoot, api, format)).catch(() => {
        throw new Error(`redocly bundle wrote no ${bundlePath(outRoot, api, format)}: name ${api.alias}'s root file ${api.name}.yaml`);
      });
}

export function bundlePath(outRoot: string, api: ApiEntry, format: (typeof formats)[number]): string {
  return path.join(outRoot, artefactDirs.openapi, `${api.name}.${format}`);
}
