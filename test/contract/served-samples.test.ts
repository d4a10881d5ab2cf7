import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { API_NAMES, loadDocument, type ApiName } from '../../src/contract/documents.js';
import { documentedOperations } from '../../scripts/mock/contract-document.js';
import { SANDBOX_ORIGINS } from '../../scripts/lib/code-samples.js';
import { repoRoot } from '../../scripts/lib/paths.js';

// The request samples as a partner reads them on the served reference pages (/docs/<api>.html,
// the x-codeSamples Redoc renders), run exactly as written, in page order, against a freshly
// started `npm start` (scripts/start.mjs in sandbox mode, its own empty data directory, free ports):
// every one must succeed (2xx), because the sandbox gives what the samples create the ids the
// later samples name (ADR 0043). The only change made to a sample is its origin, moved from the
// default ports to the free ones this sandbox listens on.

const run = promisify(execFile);
const START_TIMEOUT_MS = 90_000;
const SAMPLE_TIMEOUT_S = 30;

interface ServedSample {
  page: ApiName;
  operationId: string;
  /** The API whose sandbox server the sample calls (a partner operation listed by the platform calls the partner's). */
  target: ApiName;
  curl: string;
  typescript: string;
}

interface Sandbox {
  origins: Record<ApiName, string>;
  stop(): Promise<void>;
}

const started: Sandbox[] = [];
afterEach(async () => {
  for (const sandbox of started.splice(0)) await sandbox.stop();
});

/** `npm start` on free ports with a fresh data directory; the banner gives the addresses. */
async function startSandbox(): Promise<Sandbox> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'minibridge-samples-data-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    MINIBRIDGE_SANDBOX_HOSTAPP_PORT: '0',
    MINIBRIDGE_SANDBOX_MINIAPP_PORT: '0',
    MINIBRIDGE_SANDBOX_DEMO_PORT: '0',
    MINIBRIDGE_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  for (const name of ['DATABASE_URL', 'MINIBRIDGE_REGISTRY', 'MINIBRIDGE_ADMIN_TOKEN', 'HOST', 'REDIS_URL']) delete env[name];
  // What `npm start` runs (package.json): the compiled dist/ when it is current, the sources otherwise.
  const child = spawn(process.execPath, [path.join(repoRoot, 'scripts', 'start.mjs')], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async () => {
    await stopChild(child);
    await rm(dataDir, { recursive: true, force: true });
  };
  let output = '';
  try {
    const origins = await new Promise<Record<ApiName, string>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sandbox banner within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const address = (label: string) => new RegExp(`^  ${label} +(http://\\S+)`, 'm').exec(output)?.[1];
        const [platform, hostapp, miniapp] = [address('Platform'), address('Host app'), address('Miniapp')];
        if (platform && hostapp && miniapp && output.includes('Magic amounts')) {
          clearTimeout(timer);
          resolve({ platform, hostapp, miniapp });
        }
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the sandbox exited (${code}) before its banner:\n${output}`));
      });
    });
    const sandbox = { origins, stop };
    started.push(sandbox);
    return sandbox;
  } catch (error) {
    await stop();
    throw error;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** The samples of one served page, in the order the page shows them (by tag; under each, paths then webhooks). */
function samplesOnPage(page: ApiName, html: string): ServedSample[] {
  const match = /const __redoc_definition = (\{[\s\S]*?\});\n\s*const __redoc_options/.exec(html);
  if (!match) throw new Error(`/docs/${page}.html carries no Redoc definition`);
  const definition = JSON.parse(match[1]!) as {
    tags?: Array<{ name: string }>;
    paths?: Record<string, Record<string, Operation>>;
    webhooks?: Record<string, Record<string, Operation>>;
  };
  const samples: ServedSample[] = [];
  const add = (operation: Operation) => {
    const code = operation['x-codeSamples'] ?? [];
    const curl = code.find((sample) => sample.lang === 'Shell')?.source;
    const typescript = code.find((sample) => sample.lang === 'TypeScript')?.source;
    if (!curl || !typescript) throw new Error(`${page} ${operation.operationId}: no curl and TypeScript sample on the page`);
    const origin = /'(http:\/\/127\.0\.0\.1:\d+)/.exec(curl)?.[1];
    const target = API_NAMES.find((api) => SANDBOX_ORIGINS[api] === origin);
    if (!target) throw new Error(`${page} ${operation.operationId}: the sample calls ${origin}, not a sandbox server`);
    samples.push({ page, operationId: operation.operationId, target, curl, typescript });
  };
  const operationsOf = (section: Record<string, Record<string, Operation>>) =>
    Object.values(section).flatMap((item) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([, operation]) => operation),
    );
  // Under each tag, the operations the API serves, then the partner operations it lists (webhooks).
  const operations = [...operationsOf(definition.paths ?? {}), ...operationsOf(definition.webhooks ?? {})];
  const tags = (definition.tags ?? []).map((tag) => tag.name);
  for (const operation of operations) for (const tag of operation.tags ?? []) if (!tags.includes(tag)) tags.push(tag);
  for (const tag of tags) for (const operation of operations) if ((operation.tags ?? [])[0] === tag) add(operation);
  const untagged = operations.filter((operation) => (operation.tags ?? []).length === 0);
  if (untagged.length > 0) throw new Error(`${page}: ${untagged.map((operation) => operation.operationId).join(', ')} under no tag`);
  return samples;
}

interface Operation {
  operationId: string;
  tags?: string[];
  'x-codeSamples'?: Array<{ lang: string; source: string }>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

async function servedSamples(sandbox: Sandbox): Promise<ServedSample[]> {
  const pages: ServedSample[] = [];
  for (const api of API_NAMES) {
    const response = await fetch(`${sandbox.origins.platform}/docs/${api}.html`, { signal: AbortSignal.timeout(30_000) });
    expect(response.status, `/docs/${api}.html`).toBe(200);
    pages.push(...samplesOnPage(api, await response.text()));
  }
  return pages;
}

/** The sample pointed at this sandbox's free ports instead of the default ones; nothing else changes. */
function retarget(text: string, sandbox: Sandbox): string {
  let moved = text;
  for (const api of API_NAMES) moved = moved.replaceAll(SANDBOX_ORIGINS[api], sandbox.origins[api]);
  return moved;
}

function problem(status: number, answer: string): string | undefined {
  return status >= 200 && status < 300 ? undefined : `HTTP ${status}: ${answer.slice(0, 400)}`;
}

describe('the request samples on the served reference pages, on a fresh npm start', () => {
  it('every curl sample, run by curl as written and in page order, succeeds', async () => {
    const sandbox = await startSandbox();
    const samples = await servedSamples(sandbox);
    // One per operation each page lists: those its API serves and, on the platform's, the partner operations it calls.
    const listed = API_NAMES.flatMap((api) => [
      ...documentedOperations(loadDocument(api)),
      ...documentedOperations(loadDocument(api), 'webhooks'),
    ]);
    expect(samples.map((sample) => sample.operationId).sort()).toEqual(listed.map((operation) => operation.operationId).sort());
    // curl as written; its configuration file adds only the status line and a bound on the wait.
    const curlHome = await mkdtemp(path.join(tmpdir(), 'minibridge-curl-'));
    try {
      await writeFile(path.join(curlHome, '.curlrc'), `write-out = "\\n%{http_code}"\nmax-time = ${SAMPLE_TIMEOUT_S}\n`);
      const failures: string[] = [];
      for (const sample of samples) {
        const { stdout } = await run('bash', ['-c', retarget(sample.curl, sandbox)], {
          env: { PATH: process.env.PATH, HOME: curlHome, CURL_HOME: curlHome },
          timeout: (SAMPLE_TIMEOUT_S + 5) * 1000,
        });
        const at = stdout.lastIndexOf('\n');
        const found = problem(Number(stdout.slice(at + 1)), stdout.slice(0, at));
        if (found) failures.push(`${sample.page} ${sample.operationId}: ${found}`);
      }
      expect(failures).toEqual([]);
    } finally {
      await rm(curlHome, { recursive: true, force: true });
    }
  }, 300_000);

  it('every TypeScript sample, run by tsx as written and in page order, succeeds', async () => {
    const sandbox = await startSandbox();
    const samples = await servedSamples(sandbox);
    const dir = await mkdtemp(path.join(tmpdir(), 'minibridge-samples-'));
    try {
      const entry = path.join(repoRoot, 'src', 'shipped', 'clients', 'index.ts').split(path.sep).join('/');
      const files: string[] = [];
      for (const [index, sample] of samples.entries()) {
        const file = path.join(dir, `${String(index).padStart(2, '0')}-${sample.page}-${sample.operationId}.mts`);
        // The client package's name resolves to this checkout's source (test/package installs the tarball).
        const source = retarget(sample.typescript, sandbox);
        if (!source.includes(`from '@minibridge/client'`))
          throw new Error(`${sample.operationId}: the sample no longer imports @minibridge/client`);
        await writeFile(file, source.replace(`from '@minibridge/client'`, `from '${entry}'`));
        files.push(file.split(path.sep).join('/'));
      }
      // One process runs them one after the other, each announced on its own line.
      const runner = path.join(dir, 'run-all.mts');
      await writeFile(runner, `for (const file of ${JSON.stringify(files)}) {\n  console.log('@@ ' + file);\n  await import(file);\n}\n`);
      const { stdout } = await run(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), [runner], {
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
        const found = match ? problem(Number(match[1]), match[2]!) : `printed ${JSON.stringify(printed)}`;
        if (found) failures.push(`${sample.page} ${sample.operationId}: ${found}`);
      });
      expect(failures).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
