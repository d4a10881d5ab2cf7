import { readdirSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './paths.js';
import { runTool } from './run-tool.js';

export interface LintResult {
  errors: number;
  warnings: number;
  /** Redocly's human-readable report, present only when there are problems. */
  report: string;
}

// `--format json` prints one pretty-printed object per API, back to back; each ends with a "}"
// alone at the start of a line (nested braces are indented).
function splitObjects(output: string): string[] {
  return output.split(/(?<=^\})\s*(?=\{)/m).filter((part) => part.trim() !== '');
}

/**
 * The documents beside the three APIs that Redocly lints too: the Arazzo workflows
 * (openapi/workflows/*.arazzo.yaml) and the sandbox control descriptions they use (openapi/sandbox/).
 */
export function workflowDocuments(): string[] {
  const under = (folder: string, suffix: string) =>
    readdirSync(path.join(repoRoot, 'openapi', folder))
      .filter((name) => name.endsWith(suffix))
      .sort()
      .map((name) => path.posix.join('openapi', folder, name));
  return [...under('workflows', '.arazzo.yaml'), ...under('sandbox', '.yaml')];
}

/**
 * Lints every API listed in redocly.yaml, or the given files; warnings count as failures as
 * much as errors do.
 */
export async function lintContract(files: readonly string[] = []): Promise<LintResult> {
  const result = await runTool('redocly', ['lint', ...files, '--format', 'json']);
  const totals = splitObjects(result.stdout).map((part) => (JSON.parse(part) as { totals: { errors: number; warnings: number } }).totals);
  if (totals.length === 0) throw new Error(`redocly lint printed no results (exit ${result.code})\n${result.stderr}`);
  const errors = totals.reduce((sum, total) => sum + total.errors, 0);
  const warnings = totals.reduce((sum, total) => sum + total.warnings, 0);
  if (errors + warnings === 0 && result.code === 0) return { errors, warnings, report: '' };
  const readable = await runTool('redocly', ['lint', ...files]);
  return { errors: Math.max(errors, result.code === 0 ? 0 : 1), warnings, report: (readable.stdout + readable.stderr).trim() };
}
