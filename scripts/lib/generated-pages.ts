import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadGuides } from '../generate/landing/guides.js';
import { listApis } from './apis.js';
import { artefactDirs, generatedDir } from './paths.js';

export interface GeneratedPage {
  name: string;
  file: string;
  /** Texts the reader must see at once (the titles). */
  visibleTexts: string[];
  /** Texts the page must render somewhere, e.g. in collapsed navigation (operation names). */
  renderedTexts: string[];
}

interface BundledDocument {
  info: { title: string };
  components?: { schemas?: Record<string, { enum?: string[] }> };
  paths?: Record<string, Record<string, { summary?: string; operationId?: string }>>;
  webhooks?: Record<string, Record<string, { summary?: string; operationId?: string }>>;
}

const httpMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function operationSummaries(document: BundledDocument): string[] {
  return [...Object.values(document.paths ?? {}), ...Object.values(document.webhooks ?? {})].flatMap((item) =>
    Object.entries(item)
      .filter(([method]) => httpMethods.has(method))
      .map(([, operation]) => operation.summary ?? operation.operationId ?? ''),
  );
}

/**
 * The generated HTML pages, each with the texts it must show: an API page its title and its
 * operations' names; the landing page the API titles, the guide titles and the error codes.
 */
export async function listGeneratedPages(): Promise<GeneratedPage[]> {
  const docsDir = path.join(generatedDir, artefactDirs.docs);
  const apis = listApis().map((api) => {
    const document = JSON.parse(readFileSync(path.join(generatedDir, artefactDirs.openapi, `${api.name}.json`), 'utf8')) as BundledDocument;
    return { api, document };
  });
  return [
    {
      name: 'index',
      file: path.join(docsDir, 'index.html'),
      visibleTexts: [...apis.map(({ document }) => document.info.title), ...(await loadGuides()).map((guide) => guide.title)],
      renderedTexts: apis.flatMap(({ document }) => document.components?.schemas?.['ErrorCode']?.enum ?? []),
    },
    ...apis.map(({ api, document }) => ({
      name: api.name,
      file: path.join(docsDir, `${api.name}.html`),
      visibleTexts: [document.info.title],
      renderedTexts: operationSummaries(document),
    })),
  ];
}
