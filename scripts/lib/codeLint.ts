import { runTool } from './run-tool.js';

/** The tools that keep the code in one shape, each a step of `npm run check`. */
export interface CodeCheck {
  name: string;
  ok: boolean;
  report: string;
}

/** Imports run one way between the layers of src/ and nothing is circular (.dependency-cruiser.cjs). */
export async function layerCheck(): Promise<CodeCheck> {
  const result = await runTool('depcruise', ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err']);
  return { name: 'layers (dependency-cruiser)', ok: result.code === 0, report: (result.stdout + result.stderr).trim() };
}

/** ESLint with typescript-eslint's recommended rules (eslint.config.js). */
export async function eslintCheck(): Promise<CodeCheck> {
  const result = await runTool('eslint', ['--max-warnings', '0', '.']);
  return { name: 'eslint', ok: result.code === 0, report: (result.stdout + result.stderr).trim() };
}

/** Prettier's format (.prettierrc.json); `npx prettier --write .` mends it. */
export async function formatCheck(): Promise<CodeCheck> {
  const result = await runTool('prettier', ['--check', '--log-level', 'warn', '.']);
  return { name: 'prettier', ok: result.code === 0, report: (result.stdout + result.stderr).trim() };
}
