import path from 'node:path';
import { listApis } from './apis.js';
import { artefactDirs, generatedDir, repoRoot } from './paths.js';
import { runTool } from './run-tool.js';

export interface SpectralResult {
  problems: number;
  /** One line per problem (document, location, rule, message); empty when clean. */
  report: string;
}

interface SpectralProblem {
  code: string;
  message: string;
  path: string[];
  source?: string;
}

/**
 * Spectral with the OWASP API Security ruleset (.spectral.yaml, which lists every exception and
 * why) on the three bundled documents, the ones partners download. Every severity counts.
 */
export async function spectralContract(): Promise<SpectralResult> {
  const documents = listApis().map((api) => path.relative(repoRoot, path.join(generatedDir, artefactDirs.openapi, `${api.name}.json`)));
  const result = await runTool('spectral', [
    'lint',
    ...documents,
    '--ruleset',
    '.spectral.yaml',
    '--format',
    'json',
    '--fail-severity',
    'hint',
    '--quiet',
  ]);
  let problems: SpectralProblem[];
  try {
    problems = result.stdout.trim() === '' ? [] : (JSON.parse(result.stdout) as SpectralProblem[]);
  } catch {
    throw new Error(`spectral printed no JSON (exit ${result.code})\n${result.stdout}${result.stderr}`);
  }
  if (problems.length === 0 && result.code !== 0) throw new Error(`spectral failed (exit ${result.code})\n${result.stderr}`);
  const report = problems
    .map((problem) => `  ${path.relative(repoRoot, problem.source ?? '?')} ${problem.path.join('.')}: ${problem.code}: ${problem.message}`)
    .join('\n');
  return { problems: problems.length, report };
}
