/**
 * npm run check: the contract, its Arazzo workflows and the sandbox control descriptions lint
 * clean (warnings fail too), generated/ is exactly what the
 * sources produce, the bundles pass Spectral's OWASP API ruleset (exceptions in .spectral.yaml),
 * everything type-checks, imports run one way between the layers of src/ with no cycle
 * (dependency-cruiser), and ESLint and Prettier pass. Exits 1 on any failure, after running every step.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateAll } from './generate/generate-all.js';
import { compareTrees, firstDifference, isSame } from './lib/file-tree.js';
import { lintContract, workflowDocuments } from './lib/lint.js';
import { spectralContract } from './lib/spectral.js';
import { generatedDir } from './lib/paths.js';
import { typeCheck } from './lib/typecheck.js';
import { eslintCheck, formatCheck, layerCheck, type CodeCheck } from './lib/codeLint.js';

const failures: string[] = [];

async function lintStep(): Promise<void> {
  const lint = await lintContract();
  if (lint.errors + lint.warnings === 0) {
    console.log('✔ lint: 0 errors, 0 warnings');
    return;
  }
  failures.push('lint');
  console.error(`✘ lint: ${lint.errors} error(s), ${lint.warnings} warning(s)\n${lint.report}`);
}

async function workflowLintStep(): Promise<void> {
  const lint = await lintContract(workflowDocuments());
  if (lint.errors + lint.warnings === 0) {
    console.log('✔ lint (Arazzo workflows, sandbox controls): 0 errors, 0 warnings');
    return;
  }
  failures.push('workflow lint');
  console.error(`✘ lint (Arazzo workflows, sandbox controls): ${lint.errors} error(s), ${lint.warnings} warning(s)\n${lint.report}`);
}

async function generatedStep(): Promise<void> {
  const fresh = await mkdtemp(path.join(os.tmpdir(), 'minibridge-check-'));
  try {
    await generateAll(fresh);
    const difference = await compareTrees(fresh, generatedDir);
    if (isSame(difference)) {
      console.log('✔ generated/ matches the sources');
      return;
    }
    failures.push('generated');
    console.error('✘ generated/ differs from what the sources produce (run npm run build; never edit generated/ by hand):');
    for (const file of difference.missing) console.error(`  missing   ${file}`);
    for (const file of difference.extra) console.error(`  extra     ${file} (not produced by the build)`);
    for (const file of difference.changed) {
      console.error(`  changed   ${file}: ${await firstDifference(path.join(fresh, file), path.join(generatedDir, file))}`);
    }
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
}

async function owaspStep(): Promise<void> {
  const spectral = await spectralContract();
  if (spectral.problems === 0) {
    console.log('✔ spectral (OWASP API ruleset): 0 problems');
    return;
  }
  failures.push('spectral');
  console.error(
    `✘ spectral (OWASP API ruleset): ${spectral.problems} problem(s); fix them or list the exception with its reason in .spectral.yaml\n${spectral.report}`,
  );
}

async function typeStep(): Promise<void> {
  const types = await typeCheck();
  if (types.ok) {
    console.log('✔ tsc --noEmit: no errors');
    return;
  }
  failures.push('types');
  console.error(`✘ tsc --noEmit:\n${types.report}`);
}

function codeStep(run: () => Promise<CodeCheck>): () => Promise<void> {
  return async () => {
    const result = await run();
    if (result.ok) {
      console.log(`✔ ${result.name}: clean`);
      return;
    }
    failures.push(result.name);
    console.error(`✘ ${result.name}:\n${result.report}`);
  };
}

for (const step of [
  lintStep,
  workflowLintStep,
  generatedStep,
  owaspStep,
  typeStep,
  codeStep(layerCheck),
  codeStep(eslintCheck),
  codeStep(formatCheck),
]) {
  await step().catch((error: unknown) => {
    failures.push(step.name);
    console.error(`✘ ${step.name}: ${error instanceof Error ? error.message : String(error)}`);
  });
}
if (failures.length > 0) {
  console.error(`check failed: ${failures.join(', ')}`);
  process.exit(1);
}
