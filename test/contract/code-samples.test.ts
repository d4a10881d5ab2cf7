import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_NAMES, loadDocument, type ApiName } from '../../src/contract/documents.js';
import { loadLosslessDocument } from '../../src/contract/losslessDocument.js';
import { codeSamples, SANDBOX_ORIGINS, type CodeSample } from '../../scripts/lib/code-samples.js';
import { documentedOperations, documentedStatuses } from '../../scripts/mock/contract-document.js';
import { repoRoot } from '../../scripts/lib/paths.js';
import { startSandboxPlatform, type SandboxPlatform } from '../support/sandboxPlatform.js';

// The request samples the references show (curl and TypeScript), run against the sandbox they
// are written for, started in-process on free ports: a sample the contract or the sandbox no
// longer accepts fails here. Both kinds must reach the operation: documented status, and never
// a refusal of the request itself (invalid, unauthenticated, wrong media type).

const REFUSALS = new Set(['INVALID_REQUEST', 'UNAUTHORIZED', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'METHOD_NOT_ALLOWED']);

const samples: CodeSample[] = API_NAMES.flatMap((api) => codeSamples(api, loadLosslessDocument(api)));
let running: SandboxPlatform;
let origins: Record<ApiName, string>;

beforeAll(async () => {
  running = await startSandboxPlatform();
  origins = { platform: running.platform.url, hostapp: running.sandbox.hostappUrl, miniapp: running.sandbox.miniappUrl };
}, 120_000);

afterAll(async () => {
  await running?.close();
});

/** The sample as written, pointed at this test's sandbox instead of the default ports. */
function retarget(text: string, api: ApiName): string {
  return text.replaceAll(SANDBOX_ORIGINS[api], origins[api]);
}

function verdict(sample: CodeSample, status: number, answer: string): string | undefined {
  const operation = documentedOperations(loadDocument(sample.api)).find((found) => found.operationId === sample.operationId)!;
  const documented = documentedStatuses(operation);
  if (!documented.includes(String(status))) return `HTTP ${status}, not one of ${documented.join(', ')}`;
  let errorCode: unknown;
  try {
    errorCode = (JSON.parse(answer) as { error_code?: unknown } | null)?.error_code;
  } catch {
    errorCode = undefined; // text answers (metrics)
  }
  if (typeof errorCode === 'string' && REFUSALS.has(errorCode)) return `refused: ${answer}`;
  return undefined;
}

describe('request samples in the references', () => {
  it('every operation of the three documents has one', () => {
    const operations = API_NAMES.flatMap((api) => documentedOperations(loadDocument(api)).map((found) => found.operationId)).sort();
    expect(samples.map((sample) => sample.operationId).sort()).toEqual(operations);
  });

  it('the curl samples, sent as written (fetch), reach their operation in the sandbox', async () => {
    const failures: string[] = [];
    for (const sample of samples) {
      const { method, url, headers, body } = sample.request;
      const response = await fetch(retarget(url, sample.api), {
        method,
        headers,
        ...(body !== undefined && { body }),
        signal: AbortSignal.timeout(30_000),
      });
      const problem = verdict(sample, response.status, await response.text());
      if (problem) failures.push(`${sample.operationId}: ${problem}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('the TypeScript samples, run with tsx, reach their operation in the sandbox', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'minibridge-samples-'));
    try {
      const entry = pathToImport(path.join(repoRoot, 'src', 'shipped', 'clients', 'index.ts'));
      const files: string[] = [];
      for (const sample of samples) {
        const file = path.join(dir, `${sample.api}-${sample.operationId}.mts`);
        // The client package's name resolves to this checkout's source (the package test installs the tarball).
        await writeFile(file, retarget(sample.typescript, sample.api).replace(`from '@minibridge/client'`, `from '${entry}'`));
        files.push(file);
      }
      // One process runs them all, one after the other, each announced on its own line.
      const runner = path.join(dir, 'run-all.mts');
      await writeFile(
        runner,
        `for (const file of ${JSON.stringify(files.map(pathToImport))}) {\n  console.log('@@ ' + file);\n  await import(file);\n}\n`,
      );
      const { stdout } = await promisify(execFile)(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), [runner], {
        cwd: repoRoot,
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      const outputs = stdout.split(/^@@ /m).slice(1);
      expect(outputs).toHaveLength(samples.length);
      const failures: string[] = [];
      outputs.forEach((output, index) => {
        const sample = samples[index]!;
        const printed = output.split('\n')[1] ?? '';
        const match = /^(\d{3}) ([\s\S]*)$/.exec(printed);
        const problem = match ? verdict(sample, Number(match[1]), match[2]!) : `printed ${JSON.stringify(printed)}`;
        if (problem) failures.push(`${sample.operationId}: ${problem}`);
      });
      expect(failures).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

function pathToImport(file: string): string {
  return file.split(path.sep).join('/');
}
