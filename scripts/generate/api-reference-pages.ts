import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ApiName, OpenApiDocument } from '../../src/contract/documents.js';
import { parseLossless, stringifyLossless } from '../../src/contract/json.js';
import type { ApiEntry } from '../lib/apis.js';
import { codeSamples, withCodeSamples, type CodeSample } from '../lib/code-samples.js';
import { artefactDirs } from '../lib/paths.js';
import { runToolOrThrow } from '../lib/run-tool.js';

/**
 * The "API docs by Redocly" logo is the only thing the inline bundle still fetches from a CDN;
 * an empty inline SVG keeps the page fully offline.
 */
const remoteLogos = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
const emptySvg = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E';

/**
 * Builds one self-contained Redoc page per API (the viewer and the document inlined) from its
 * bundle (`bundleJsonPath`, already written), with request samples for every operation
 * (`x-codeSamples`, added to the rendered copy only).
 */
export async function buildApiReferencePages(
  apis: readonly ApiEntry[],
  outRoot: string,
  bundleJsonPath: (api: ApiEntry) => string,
): Promise<void> {
  const documents = await Promise.all(
    apis.map(async (api) => ({ api, document: parseLossless(await readFile(bundleJsonPath(api), 'utf8')) as OpenApiDocument })),
  );
  const samples = new Map<string, CodeSample>(
    documents.flatMap(({ api, document }) =>
      codeSamples(api.name as ApiName, document).map((sample) => [sample.operationId, sample] as const),
    ),
  );
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-docs-'));
  try {
    await Promise.all(
      documents.map(async ({ api, document }) => {
        const source = path.join(workDir, `${api.name}.json`);
        await writeFile(source, stringifyLossless(withCodeSamples(document, samples)));
        await buildPage(source, apiReferencePagePath(outRoot, api));
      }),
    );
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

export function apiReferencePagePath(outRoot: string, api: ApiEntry): string {
  return path.join(outRoot, artefactDirs.docs, `${api.name}.html`);
}

async function buildPage(source: string, file: string): Promise<void> {
  await runToolOrThrow('redocly', ['build-docs', source, '-o', file, '--inlineBundle']);
  let html = await readFile(file, 'utf8');
  for (const logo of remoteLogos) {
    if (!html.includes(logo)) throw new Error(`${file}: expected the Redocly logo URL ${logo}; has build-docs changed?`);
    html = html.replaceAll(logo, emptySvg);
  }
  await writeFile(file, html);
}
