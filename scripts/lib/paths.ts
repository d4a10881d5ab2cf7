import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The repository root, so scripts and tests work from any working directory. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const generatedDir = path.join(repoRoot, 'generated');
export const guidesDir = path.join(repoRoot, 'docs', 'guides');
export const baselineDir = path.join(repoRoot, 'openapi', 'baseline');
export const screenshotsDir = path.join(repoRoot, 'docs', 'screenshots');

/** Where a generated tree keeps each kind of artefact (relative to the tree's root). */
export const artefactDirs = { openapi: 'openapi', docs: 'docs', types: 'types', validators: 'validators' } as const;
