import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ApiEntry } from './apis.js';
import { runTool } from './run-tool.js';

export interface BreakingCheck {
  api: string;
  /** compared: optic ran; no-baseline: the API was never released, so nothing can break. */
  outcome: 'compatible' | 'breaking' | 'no-baseline';
  report: string;
}

/**
 * Compares each API's bundled JSON with the released baseline using optic. `--validation loose`
 * is needed because the documents declare jsonSchemaDialect, which optic's strict mode rejects.
 * Optic does not check webhooks; the partner operations are checked in their own documents.
 */
export async function checkBreakingChanges(apis: readonly ApiEntry[], baselineDir: string, currentDir: string): Promise<BreakingCheck[]> {
  return Promise.all(
    apis.map(async (api): Promise<BreakingCheck> => {
      const baseline = path.join(baselineDir, `${api.name}.json`);
      const current = path.join(currentDir, `${api.name}.json`);
      if (!existsSync(baseline)) return { api: api.name, outcome: 'no-baseline', report: `${baseline} does not exist` };
      if (!existsSync(current))
        return { api: api.name, outcome: 'breaking', report: `${current} does not exist: a released API was removed` };
      const result = await runTool('optic', ['diff', baseline, current, '--check', '--validation', 'loose']);
      const report = (result.stdout + result.stderr).trim();
      if (result.code === 0) return { api: api.name, outcome: 'compatible', report };
      if (result.code === 1) return { api: api.name, outcome: 'breaking', report };
      throw new Error(`optic diff ${api.name} failed (exit ${result.code})\n${report}`);
    }),
  );
}
