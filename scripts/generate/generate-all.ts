import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
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
  await Promise.all([bundleOpenApi(apis, outRoot), buildApiReferencePages(apis, outRoot)]);
  const landingPage = renderLandingPage({ apis, bundleJsonPath: (api) => bundlePath(outRoot, api, 'json'), errorCodesApi: 'platform' });
  const [html] = await Promise.all([landingPage, generateApiTypes(apis, outRoot), generateRegistryTypes(outRoot), generateRegistryValidator(outRoot), buildSdk(outRoot)]);
  await writeFile(path.join(outRoot, artefactDirs.docs, 'index.html'), html);
}
