import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './paths.js';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Environment for every tool: no telemetry, no update checks (the build runs offline), and
 * REDOCLY_TELEMETRY also changes the HTML build-docs writes, so it must be fixed for the
 * output to be reproducible.
 */
const toolEnv: NodeJS.ProcessEnv = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_UPDATE_NOTIFIER: '1',
  OPTIC_TELEMETRY_LEVEL: 'off',
  FORCE_COLOR: '0',
};

/** Where a binary installed by npm lies: node_modules/.bin of the repository. */
export function toolPath(bin: string): string {
  return path.join(repoRoot, 'node_modules', '.bin', bin);
}

/** Runs a binary from node_modules/.bin in the repository root and collects its output. */
export function runTool(bin: string, args: readonly string[]): Promise<ToolResult> {
  const executable = toolPath(bin);
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, { cwd: repoRoot, env: toolEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code: code ?? 1, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }),
    );
  });
}

/** Runs a tool and throws, with its output, unless it exits 0. */
export async function runToolOrThrow(bin: string, args: readonly string[]): Promise<ToolResult> {
  const result = await runTool(bin, args);
  if (result.code !== 0) {
    throw new Error(`${bin} ${args.join(' ')} failed (exit ${result.code})\n${result.stdout}${result.stderr}`);
  }
  return result;
}
