/**
 * npm run check: the contract, its Arazzo workflows and the sandbox control descriptions lint
 * clean (warnings fail too), generated/ is exactly what the
 * sources produce, the bundles pass Spectral's OWASP API ruleset (exceptions in .spectral.yaml),
 * everything type-checks, imports run one way between the layers of src/ with no cycle
 * (dependency-cruiser), and ESLint and Prettier pass. Exits 1 on any failure, after running every step.
 *
 * The steps run side by side (ADR 0044): most are child processes (tsc, ESLint, Prettier,
 * dependency-cruiser) that each keep one core busy, and none writes where another reads
 * (generated/ is rebuilt into a temporary folder). Each step's lines are held back and printed
 * in the order below, so the report reads the same however the steps interleave.
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

/** Where a step writes its lines: held until the steps before it have printed. */
interface Output {
  log(line: string): void;
  error(line: string): void;
}

async function lintStep(out: Output): Promise<void> {
  const lint = await lintContract();
  if (lint.errors + lint.warnings === 0) {
    out.log('✔ lint: 0 errors, 0 warnings');
    return;
  }
  failures.push('lint');
  out.error(`✘ lint: ${lint.errors} error(s), ${lint.warnings} warning(s)\n${lint.report}`);
}

async function workflowLintStep(out: Output): Promise<void> {
  const lint = await lintContract(workflowDocuments());
  if (lint.errors + lint.warnings === 0) {
    out.log('✔ lint (Arazzo workflows, sandbox controls): 0 errors, 0 warnings');
    return;
  }
  failures.push('workflow lint');
  out.error(`✘ lint (Arazzo workflows, sandbox controls): ${lint.errors} error(s), ${lint.warnings} warning(s)\n${lint.report}`);
}

async function generatedStep(out: Output): Promise<void> {
  const fresh = await mkdtemp(path.join(os.tmpdir(), 'minibridge-check-'));
  try {
    await generateAll(fresh);
    const difference = await compareTrees(fresh, generatedDir);
    if (isSame(difference)) {
      out.log('✔ generated/ matches the sources');
      return;
    }
    failures.push('generated');
    out.error('✘ generated/ differs from what the sources produce (run npm run build; never edit generated/ by hand):');
    for (const file of difference.missing) out.error(`  missing   ${file}`);
    for (const file of difference.extra) out.error(`  extra     ${file} (not produced by the build)`);
    for (const file of difference.changed) {
      out.error(`  changed   ${file}: ${await firstDifference(path.join(fresh, file), path.join(generatedDir, file))}`);
    }
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
}

async function owaspStep(out: Output): Promise<void> {
  const spectral = await spectralContract();
  if (spectral.problems === 0) {
    out.log('✔ spectral (OWASP API ruleset): 0 problems');
    return;
  }
  failures.push('spectral');
  out.error(
    `✘ spectral (OWASP API ruleset): ${spectral.problems} problem(s); fix them or list the exception with its reason in .spectral.yaml\n${spectral.report}`,
  );
}

async function typeStep(out: Output): Promise<void> {
  const types = await typeCheck();
  if (types.ok) {
    out.log('✔ tsc --noEmit: no errors');
    return;
  }
  failures.push('types');
  out.error(`✘ tsc --noEmit:\n${types.report}`);
}

function codeStep(run: () => Promise<CodeCheck>): (out: Output) => Promise<void> {
  return async (out) => {
    const result = await run();
    if (result.ok) {
      out.log(`✔ ${result.name}: clean`);
      return;
    }
    failures.push(result.name);
    out.error(`✘ ${result.name}:\n${result.report}`);
  };
}

const steps: Array<[string, (out: Output) => Promise<void>]> = [
  ['lint', lintStep],
  ['workflow lint', workflowLintStep],
  ['generated', generatedStep],
  ['spectral', owaspStep],
  ['types', typeStep],
  ['layers', codeStep(layerCheck)],
  ['eslint', codeStep(eslintCheck)],
  ['prettier', codeStep(formatCheck)],
];
const started = steps.map(([name, step]) => {
  const lines: Array<['log' | 'error', string]> = [];
  const out: Output = { log: (line) => lines.push(['log', line]), error: (line) => lines.push(['error', line]) };
  const done = step(out).catch((error: unknown) => {
    failures.push(name);
    out.error(`✘ ${name}: ${error instanceof Error ? error.message : String(error)}`);
  });
  return { lines, done };
});
for (const { lines, done } of started) {
  await done;
  for (const [stream, line] of lines) (stream === 'log' ? console.log : console.error)(line);
}
if (failures.length > 0) {
  console.error(`check failed: ${failures.join(', ')}`);
  process.exit(1);
}
