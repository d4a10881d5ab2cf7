/**
 * The walk of one E1 through src/: which files its code runs in, which folders it crosses and how
 * often it reads the registry snapshot. Counts, not time, so it runs on a busy machine; not part of
 * `npm run bench`. `npx tsx bench/e1Walk.ts [checkout]` measures the checkout given (default: this
 * one), in process, on PGlite (or a fresh schema of DATABASE_URL), through its stable entry points
 * alone (startPlatform, loadRegistry, the context's `registry`), so an older checkout runs too.
 * Definitions and results: bench/results/e1-walk.md.
 */
import { Session } from 'node:inspector/promises';
import type { Profiler } from 'node:inspector';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import type * as ServerModule from '../src/platform/server.js';
import type * as RegistryModule from '../src/platform/registry/loadRegistry.js';
import { openBenchDatabase } from './postgres.js';
import { E1_PATH, e1Body, miniappHeaders, writeRegistry } from './scenario.js';

const WARM_UP = 10;
const MEASURED = 20;
const PROFILED = 2_000;
const PROFILE_PARTS = 4;

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const srcUrl = pathToFileURL(path.join(root, 'src')).href + '/';

/** `src/platform/http/app.ts` for a script of the checkout's src/ (generated code and dependencies excluded), else undefined. */
function srcFile(url: string): string | undefined {
  if (!url.startsWith(srcUrl) || url.includes('/node_modules/') || url.includes('/generated/')) return undefined;
  return path.posix.join('src', url.slice(srcUrl.length));
}
const folderOf = (file: string) => path.posix.dirname(file);

/** Fake host app (E3: a new order_payment_id each time) and miniapp server, in this process. */
async function startFakes(): Promise<{ hostappUrl: string; miniappUrl: string; close(): Promise<void> }> {
  let next = 0;
  const answer = (body: () => unknown) =>
    createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body())));
    });
  const servers = [answer(() => ({ order_payment_id: `hop_walk_${Date.now()}_${next++}` })), answer(() => ({ received: true }))];
  const listen = (server: Server) =>
    new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
    );
  const [hostappUrl, miniappUrl] = await Promise.all(servers.map(listen));
  const close = async () => void (await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));
  return { hostappUrl: hostappUrl!, miniappUrl: miniappUrl!, close };
}

let sent = 0;
async function sendE1(url: string): Promise<void> {
  const response = await fetch(url + E1_PATH, { method: 'POST', headers: miniappHeaders, body: e1Body(`walk-${Date.now()}-${sent++}`) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`E1 answered ${response.status}: ${text}`);
  // Work the platform does once the answer is out (logging, metrics) belongs to the E1 too.
  await new Promise((resolve) => setTimeout(resolve, 20));
}

// Interpreted code only, so every call is its own frame in the CPU profiles: optimised code put an
// inlined callee's samples on its caller (edges that skip a function) and never settled (new edges
// in every part).
setFlagsFromString('--no-opt');
setFlagsFromString('--no-sparkplug');
const session = new Session();
session.connect();
await session.post('Profiler.enable');
// Before the checkout's code loads, so every function of it is counted exactly.
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

const { startPlatform } = (await import(pathToFileURL(path.join(root, 'src/platform/server.ts')).href)) as typeof ServerModule;
const { loadRegistry } = (await import(
  pathToFileURL(path.join(root, 'src/platform/registry/loadRegistry.ts')).href
)) as typeof RegistryModule;

const fakes = await startFakes();
const registryFile = path.join(mkdtempSync(path.join(tmpdir(), 'e1-walk-')), 'registry.json');
writeRegistry(registryFile, fakes.hostappUrl, fakes.miniappUrl);
const database = process.env.DATABASE_URL ? await openBenchDatabase(process.env.DATABASE_URL) : undefined;
if (process.env.DATABASE_URL && !database) throw new Error('PostgreSQL at DATABASE_URL is unreachable');
const running = await startPlatform({
  registry: loadRegistry(registryFile),
  config: {
    port: 0,
    host: '127.0.0.1',
    databaseUrl: database?.url,
    dataDir: mkdtempSync(path.join(tmpdir(), 'e1-walk-pglite-')),
    logLevel: 'silent',
    redisUrl: undefined,
    rateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
    // Nothing but the E1s runs: no E6 worker, reconciler or records worker.
    worker: { pollMs: 60_000, batchSize: 50, leaseMs: 60_000, enabled: false },
    reconciler: { pollMs: 60_000, batchSize: 50, enabled: false },
    records: { pollMs: 60_000, batchSize: 1_000, restRatio: 4, enabled: false },
  },
});

// Registry reads: the context's `registry` getter, wrapped here only (src is not changed).
let registryReads = 0;
const context = running.platform;
const read = Object.getOwnPropertyDescriptor(context, 'registry')!.get!;
Object.defineProperty(context, 'registry', {
  configurable: true,
  get() {
    registryReads++;
    return read.call(context);
  },
});

for (let i = 0; i < WARM_UP; i++) await sendE1(running.url);

/**
 * Per measured E1: the src/ files any of whose functions ran (takePreciseCoverage resets the
 * counts, so each take is a delta), and every function (file and name) that ran in one.
 */
const e1Functions = new Set<string>();
const walks: { files: Set<string>; functions: number; registryReads: number }[] = [];
for (let i = 0; i < MEASURED; i++) {
  await session.post('Profiler.takePreciseCoverage');
  registryReads = 0;
  await sendE1(running.url);
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Set<string>();
  let functions = 0;
  for (const script of result) {
    const file = srcFile(script.url);
    const ran = script.functions.filter((fn) => fn.ranges[0]!.count > 0);
    if (file && ran.length > 0) {
      files.add(file);
      functions += ran.length;
      for (const fn of ran) e1Functions.add(`${file} ${fn.functionName}`);
    }
  }
  walks.push({ files, functions, registryReads });
}
await session.post('Profiler.stopPreciseCoverage');
const e1Files = new Set(walks.flatMap((walk) => [...walk.files]));

/**
 * Folder crossings from CPU profiles sampled every microsecond over PROFILED E1s, in PROFILE_PARTS
 * parts (the last part finding nothing new says the sampling saw the whole walk): each sampled
 * src/ function and the nearest src/ function below it on the stack, frames outside src/ between
 * them skipped, counted when their folders differ and both functions ran in a measured E1 (which
 * leaves out the partner directory's timed refresh).
 */
type Edge = { from: string; to: string; direct: boolean };
const sampling = { samples: 0, microseconds: 0, functions: new Set<string>() };
async function profileEdges(count: number): Promise<Map<string, Edge>> {
  await session.post('Profiler.setSamplingInterval', { interval: 1 });
  await session.post('Profiler.start');
  for (let i = 0; i < count; i++) await sendE1(running.url);
  const { profile } = await session.post('Profiler.stop');
  sampling.samples += profile.samples?.length ?? 0;
  sampling.microseconds += profile.endTime - profile.startTime;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, Profiler.ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const edges = new Map<string, Edge>();
  // Named by file and function; the position (of the transpiled code) only tells anonymous functions apart.
  const nameOf = ({ callFrame }: Profiler.ProfileNode) =>
    `${srcFile(callFrame.url)} ${callFrame.functionName || '(anonymous)'}@${callFrame.lineNumber}:${callFrame.columnNumber}`;
  const inE1 = ({ callFrame }: Profiler.ProfileNode) => e1Functions.has(`${srcFile(callFrame.url)} ${callFrame.functionName}`);
  for (const node of byId.values()) {
    const file = srcFile(node.callFrame.url);
    if (!file || !inE1(node)) continue;
    sampling.functions.add(`${file} ${node.callFrame.functionName}`);
    let caller = parent.get(node.id);
    let direct = true;
    while (caller && !srcFile(caller.callFrame.url)) {
      caller = parent.get(caller.id);
      direct = false;
    }
    if (!caller) continue;
    const callerFile = srcFile(caller.callFrame.url)!;
    if (!inE1(caller) || folderOf(callerFile) === folderOf(file)) continue;
    const edge = { from: nameOf(caller), to: nameOf(node), direct };
    const key = `${edge.from} -> ${edge.to}`;
    edges.set(key, { ...edge, direct: direct || (edges.get(key)?.direct ?? false) });
  }
  return edges;
}
const edges = new Map<string, Edge>();
const newPerPart: number[] = [];
for (let part = 0; part < PROFILE_PARTS; part++) {
  const before = edges.size;
  for (const [key, edge] of await profileEdges(PROFILED / PROFILE_PARTS))
    edges.set(key, { ...edge, direct: edge.direct || (edges.get(key)?.direct ?? false) });
  newPerPart.push(edges.size - before);
}

await running.close();
await fakes.close();
await database?.drop();
session.disconnect();

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const summary = (values: number[]) => {
  const s = sorted(values);
  return `first ${values[0]}, mean ${(values.reduce((a, b) => a + b, 0) / values.length).toFixed(1)}, min ${s[0]}, max ${s.at(-1)}`;
};
const folderPairs = new Set(
  [...edges.values()].map((edge) => `${folderOf(edge.from.split(' ')[0]!)} -> ${folderOf(edge.to.split(' ')[0]!)}`),
);
const shown = (name: string) => name.replace(/@\d+:\d+$/, '');
console.log(`checkout ${root} on ${database ? 'PostgreSQL' : 'PGlite'}; ${MEASURED} measured E1s after ${WARM_UP}`);
console.log(`src files run per E1: ${summary(walks.map((walk) => walk.files.size))} (union ${e1Files.size})`);
console.log(`src functions run per E1: ${summary(walks.map((walk) => walk.functions))}`);
console.log(`folders per E1: ${summary(walks.map((walk) => new Set([...walk.files].map(folderOf)).size))}`);
console.log(`registry reads per E1: ${summary(walks.map((walk) => walk.registryReads))}`);
console.log(
  `folder crossings (distinct caller -> callee functions, ${PROFILED} E1s profiled): ${edges.size}` +
    ` (direct calls ${[...edges.values()].filter((edge) => edge.direct).length}; new in each of ${PROFILE_PARTS} parts ${newPerPart.join(', ')});` +
    ` distinct folder pairs ${folderPairs.size}; one sample every ${(sampling.microseconds / sampling.samples).toFixed(0)} µs`,
);
// A call too short for any sample: a crossing into it cannot be seen, so they are listed.
const unsampled = [...e1Functions].filter((fn) => !sampling.functions.has(fn)).sort();
console.log(`functions that ran in an E1 but no sample caught: ${unsampled.length} of ${e1Functions.size}`);
console.log(
  '\nfiles (union):\n' +
    [...e1Files]
      .sort()
      .map((file) => `  ${file}`)
      .join('\n'),
);
console.log(
  '\nfolder pairs:\n' +
    [...folderPairs]
      .sort()
      .map((pair) => `  ${pair}`)
      .join('\n'),
);
console.log(
  '\ncrossings:\n' +
    [...edges.values()]
      .map((edge) => `  ${shown(edge.from)} -> ${shown(edge.to)}${edge.direct ? '' : ' (through frames outside src/)'}`)
      .sort()
      .join('\n'),
);
console.log('\nfunctions no sample caught:\n' + unsampled.map((fn) => `  ${fn || '(anonymous)'}`).join('\n'));
