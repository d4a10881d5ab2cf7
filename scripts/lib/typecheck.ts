import { runTool } from './run-tool.js';

/** Type-checks src/, scripts/, test/ and generated/ together (tsconfig.json); returns tsc's report. */
export async function typeCheck(): Promise<{ ok: boolean; report: string }> {
  const result = await runTool('tsc', ['--noEmit', '-p', 'tsconfig.json']);
  return { ok: result.code === 0, report: (result.stdout + result.stderr).trim() };
}
