import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ApiEntry } from '../lib/apis.js';
import { artefactDirs } from '../lib/paths.js';
import { runToolOrThrow } from '../lib/run-tool.js';

/**
 * The "API docs by Redocly" logo is the only thing the inline bundle still fetches from a CDN;
 * an empty inline SVG keeps the page fully offline.
 */
const remoteLogos = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
const emptySvg = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E';

/** Builds one self-contained Redoc page per API (the viewer and the document inlined). */
export async function buildApiReferencePages(apis: readonly ApiEntry[], outRoot: string): Promise<void> {
  await Promise.all(apis.map((api) => buildPage(api, apiReferencePagePath(outRoot, api))));
}

export function apiReferencePagePath(outRoot: string, api: ApiEntry): string {
  return path.join(outRoot, artefactDirs.docs, `${api.name}.html`);
}

async function buildPage(api: ApiEntry, file: string): Promise<void> {
  await runToolOrThrow('redocly', ['build-docs', api.alias, '-o', file, '--inlineBundle']);
  let html = await readFile(file, 'utf8');
  for (const logo of remoteLogos) {
    if (!html.includes(logo)) throw new Error(`${file}: expected the Redocly logo URL ${logo}; has build-docs changed?`);
    html = html.replaceAll(logo, emptySvg);
  }
  await writeFile(file, html);
}
