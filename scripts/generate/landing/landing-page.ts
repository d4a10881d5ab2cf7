import { readFile } from 'node:fs/promises';
import { parse } from 'lossless-json';
import type { ApiEntry } from '../../lib/apis.js';
import { errorCodeTableMarker, readErrorCodes, renderErrorCodeTable } from './error-code-table.js';
import { loadGuides, renderGuide } from './guides.js';
import { lifecycleTableMarker, renderLifecycleTable } from './lifecycle-table.js';
import { renderRetentionTable, retentionTableMarker } from './retention-table.js';
import { RepoLinks, type RenderedRepoPage } from './repo-pages.js';
import { landingPageCss } from './styles.js';

export interface LandingPageInput {
  apis: readonly ApiEntry[];
  /** Bundled JSON document of each API, by API name. */
  bundleJsonPath: (api: ApiEntry) => string;
  /** The API whose ErrorCode schema feeds the error-code table. */
  errorCodesApi: string;
}

interface ApiInfo {
  title: string;
  version: string;
  summary?: string;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

async function readInfo(file: string): Promise<ApiInfo> {
  const document = parse(await readFile(file, 'utf8')) as { info?: ApiInfo };
  if (!document.info?.title || !document.info.version) throw new Error(`${file}: info.title and info.version are required`);
  return document.info;
}

export interface LandingPages {
  /** generated/docs/index.html */
  index: string;
  /** The repository files the guides link to, rendered (paths relative to generated/docs/). */
  repoPages: RenderedRepoPage[];
}

/** The landing page: links to the API references, then the guides; and the pages the guides link to. */
export async function renderLandingPage(input: LandingPageInput): Promise<LandingPages> {
  const infos = await Promise.all(input.apis.map(async (api) => ({ api, info: await readInfo(input.bundleJsonPath(api)) })));
  const errorCodesApi = input.apis.find((api) => api.name === input.errorCodesApi);
  if (!errorCodesApi) throw new Error(`no API named ${input.errorCodesApi} carries the ErrorCode schema`);
  const errorTable = renderErrorCodeTable(await readErrorCodes(input.bundleJsonPath(errorCodesApi)));
  const hostappApi = input.apis.find((api) => api.name === 'hostapp');
  if (!hostappApi) throw new Error('no API named hostapp carries E4 and its x-reconciliation');
  const lifecycleTable = await renderLifecycleTable(input.bundleJsonPath(errorCodesApi), input.bundleJsonPath(hostappApi));
  const retentionTable = await renderRetentionTable(input.bundleJsonPath(errorCodesApi));

  const guides = await loadGuides();
  const links = new RepoLinks(new Set(guides.map((guide) => guide.slug)));
  const guideSections = guides.map((guide) => renderGuide(guide, links));
  const repoPages = await links.renderPages();
  // The table goes where a guide asks for it; until one does, it gets a section of its own, so
  // the page always carries the catalogue and never a hand-written copy of it.
  const tablePlaced = guideSections.some((html) => html.includes(errorCodeTableMarker));
  const errorSection = `<section class="guide" aria-labelledby="error-codes">\n<h2 id="error-codes">Error codes</h2>\n${errorTable}\n</section>`;
  const guidesHtml = [
    ...guideSections.map((html) =>
      html
        .replace(errorCodeTableMarker, errorTable)
        .replace(lifecycleTableMarker, lifecycleTable)
        .replace(retentionTableMarker, retentionTable),
    ),
    ...(tablePlaced ? [] : [errorSection]),
  ].join('\n');

  const apiCards = infos.map(
    ({ api, info }) => `<li>
<h3><a href="${api.name}.html">${escapeHtml(info.title)}</a></h3>
<p>${escapeHtml(info.summary ?? '')}</p>
<div class="formats">v${escapeHtml(info.version)} · <a href="${api.name}.html">reference</a> · <a href="../openapi/${api.name}.yaml">YAML</a> · <a href="../openapi/${api.name}.json">JSON</a></div>
</li>`,
  );
  const toc = [
    '<h2>API reference</h2><ul>',
    ...infos.map(({ api, info }) => `<li><a href="${api.name}.html">${escapeHtml(info.title)}</a></li>`),
    '</ul>',
    '<h2>Guides</h2><ul>',
    ...guides.map((guide) => `<li><a href="#${guide.slug}">${escapeHtml(guide.title)}</a></li>`),
    ...(tablePlaced ? [] : ['<li><a href="#error-codes">Error codes</a></li>']),
    '</ul>',
  ];
  const platformVersion = infos.find(({ api }) => api.name === input.errorCodesApi)?.info.version ?? '';

  const index = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Minibridge API documentation</title>
<style>${landingPageCss}</style>
</head>
<body>
<header>
<h1>Minibridge API documentation</h1>
<p>Pay for miniapp orders with the host app's payment system, and carry events between host apps and miniapps. Contract v${escapeHtml(platformVersion)}.</p>
</header>
<main>
<nav class="toc" aria-label="Contents">
${toc.join('\n')}
</nav>
<article>
<ul class="apis">
${apiCards.join('\n')}
</ul>
<p class="samples">Every operation in the references shows request samples, in curl and in TypeScript with the clients of the <code>minibridge</code> package, made from the contract. They are addressed to the sandbox that <code>npm start</code> runs on <code>127.0.0.1</code> (platform <code>:8080</code>, host app <code>:8081</code>, miniapp <code>:8082</code>) with its public sandbox-only credentials, so they run as written; the host-app simulator with the demo miniapp is at <code>http://127.0.0.1:8081/simulator/</code>. The YAML and JSON links are the bundled contract, for code generators and mock servers.</p>
${guidesHtml}
</article>
</main>
<footer>Generated by <code>npm run build</code> from <code>openapi/</code> and <code>docs/guides/</code>. Do not edit by hand.</footer>
</body>
</html>
`;
  return { index, repoPages };
}
