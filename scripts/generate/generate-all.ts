import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildBridgeConformance } from '../build-bridge-conformance.js';
import { buildSdk } from '../build-sdk.js';
import { listApis } from '../lib/apis.js';
import { artefactDirs } from '../lib/paths.js';
import { buildApiReferencePages } from './api-reference-pages.js';
import { generatedReadme } from './generated-readme.js';
import { renderLandingPage } from './landing/landing-page.js';
import { bundleOpenApi, bundlePath } from './openapi-bundles.js';
import { generateRegistryTypes } from './registry-types.js';
import { generateRegistryValidator } from './registry-validator.js';
import { generateApiTypes } from './typescript-types.js';

/**
 * Produces the whole generated/ tree into outRoot (an empty folder). build syncs the result into
 * generated/ and check compares it with generated/: one code path for both.
 */
export async function generateAll(outRoot: string): Promise<void> {
  const apis = listApis();
  await Promise.all(Object.values(artefactDirs).map((dir) => mkdir(path.join(outRoot, dir), { recursive: true })));
  await writeFile(path.join(outRoot, 'README.md'), generatedReadme);
  await bundleOpenApi(apis, outRoot);
  const bundleJsonPath = (api: (typeof apis)[number]) => bundlePath(outRoot, api, 'json');
  const landingPage = renderLandingPage({ apis, bundleJsonPath, errorCodesApi: 'platform' });
  const [pages] = await Promise.all([
    landingPage,
    buildApiReferencePages(apis, outRoot, bundleJsonPath),
    generateApiTypes(apis, outRoot),
    generateRegistryTypes(outRoot),
    generateRegistryValidator(outRoot),
    // The conformance page bundles the SDK files this build stages.
    buildSdk(outRoot).then(() => buildBridgeConformance(outRoot)),
  ]);
  const docsDir = path.join(outRoot, artefactDirs.docs);
  await writeFile(path.join(docsDir, 'index.html'), pages.index);
  for (const page of pages.repoPages) {
    await mkdir(path.dirname(path.join(docsDir, page.file)), { recursive: true });
    await writeFile(path.join(docsDir, page.file), page.html);
  }
}
