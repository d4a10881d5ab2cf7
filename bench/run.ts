/**
 * npm run bench: every path partners load, each against its durable limit and its peer, measured
 * side by side on this machine in interleaved rounds; then E6 latency and drain, two instances
 * behind a round-robin proxy, start-up, and the per-operation costs the capacity model needs. See
 * bench/README.md for what is measured and the knobs (BENCH_QUICK=1 for a short run,
 * BENCH_ONLY=e1,e2 for some parts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildServer } from '../test/resilience/support/childProcess.js';
import { capacityFigures } from './capacity.js';
import { settings, type BenchContext } from './context.js';
import { e6Phase } from './e6.js';
import { createOrders, percentile } from './flows.js';
import { paced } from './load.js';
import { describeMachine } from './machine.js';
import { e1Path, e2Path, eventPath, paymentPath, type Path, type PathOptions } from './paths.js';
import { observePostgres, openBenchDatabase, type PostgresObserver } from './postgres.js';
import { createProcesses, platformMode, withApplicationName } from './processes.js';
import { markdown, type BenchResults, type PathResult, type RatioResult } from './report.js';
import { accounted, interleave, type Contender, type Sample } from './rounds.js';
import { E1_PATH, e1BodyTemplate, miniappHeaders, parties, writeRegistry } from './scenario.js';
import { reconcilePhase } from './reconcile.js';
import { addedRatio, pairedRatio } from './stats.js';
import { startupPhase } from './startup.js';
import { compareResults, targets } from './targets.js';
import { twoInstancesPhase } from './twoInstances.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const parts = ['e1', 'e2', 'payment', 'e8', 'miniapp-event', 'e6', 'reconcile', 'two', 'startup'] as const;
type Part = (typeof parts)[number];
/** BENCH_ONLY=a,b: run only these parts; such a run prints its table and writes no results file. */
const only = process.env.BENCH_ONLY?.split(',').map((part) => part.trim());
for (const part of only ?? [])
  if (!(parts as readonly string[]).includes(part)) throw new Error(`BENCH_ONLY: unknown part ${part}; one of ${parts.join(', ')}`);
const runs = (part: Part) => !only || only.includes(part);
const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const log = (message: string) => process.stderr.write(`[bench] ${new Date().toISOString().slice(11, 19)} ${message}\n`);

const machine = describeMachine();
const workDir = mkdtempSync(join(os.tmpdir(), 'minibridge-bench-'));
const registryFile = join(workDir, 'registry.json');
const mode = platformMode();
const processes = createProcesses(mode, {
  cpuProfileDir: process.env.BENCH_CPU_PROF,
  profileOthers: process.env.BENCH_CPU_PROF_ALL === '1',
  gcTrace: process.env.BENCH_GC_TRACE,
});
const notes: string[] = [];
/** The bench's own processes and backends, set once PostgreSQL is observed. */
let ours = async (): Promise<number[]> => [process.pid, ...processes.pids()];
const dropSchemas: (() => Promise<void>)[] = [];

function minibridgeEnv(database: { url: string } | { dir: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    MINIBRIDGE_REGISTRY: registryFile,
    // One app_id sends the whole load: the per-partner rate limit (50/s) would measure itself.
    MINIBRIDGE_RATE_LIMIT: '100000000',
    MINIBRIDGE_RATE_BURST: '100000000',
    LOG_LEVEL: settings.logLevel,
    // Production mode (MINIBRIDGE_REGISTRY) needs a key to seal partner secrets (ADR 0027); a fixed one for the run.
    MINIBRIDGE_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    DATABASE_URL: 'url' in database ? database.url : '',
    MINIBRIDGE_DATA_DIR: 'dir' in database ? database.dir : '',
    ...extra,
  };
}

/** A fresh schema for one contender, dropped at the end; its URL names the contender's connections. */
async function schemaFor(applicationName: string): Promise<{ url: string; schema: string }> {
  const database = await openBenchDatabase(databaseUrl);
  if (!database) throw new Error('PostgreSQL is unreachable');
  dropSchemas.push(database.drop);
  return { url: withApplicationName(database.url, applicationName), schema: database.schema };
}

function contender(
  name: string,
  role: Contender['role'],
  note: string,
  server: ChildServer,
  postgres?: { applicationName: string; schema: string },
): Contender {
  return { name, role, note, url: server.url, pid: server.pid, postgres, peakRssBytes: () => server.peakRssBytes() };
}

/** The contenders on PostgreSQL that every path has: Minibridge, its durable limit and its peer. */
async function startPostgresContenders(hostapp: ChildServer, miniapp: ChildServer) {
  const partners = { BENCH_HOSTAPP_URL: hostapp.url, BENCH_MINIAPP_URL: miniapp.url };
  const mb = await schemaFor('bench-minibridge');
  const minibridge = await processes.platform(minibridgeEnv({ url: mb.url }), true);
  const dl = await schemaFor('bench-durable-limit');
  const durable = await processes.other('contenders/durableLimit.ts', { ...partners, BENCH_DATABASE_URL: dl.url });
  const pr = await schemaFor('bench-peer');
  const peer = await processes.other('peer/server.ts', {
    ...partners,
    ...peerCredentials,
    BENCH_DATABASE_URL: pr.url,
    BENCH_PEER_E1_STORES: '1',
  });
  return {
    servers: [minibridge, durable, peer],
    minibridge: contender('minibridge-postgres', 'subject', `PostgreSQL, schema ${mb.schema}`, minibridge, {
      applicationName: 'bench-minibridge',
      schema: mb.schema,
    }),
    durable: contender('durable-limit', 'durable', 'raw forwarder + the same durable reads and writes, batched', durable, {
      applicationName: 'bench-durable-limit',
      schema: dl.schema,
    }),
    peer: contender('peer', 'peer', 'Express + express-openapi-validator + fetch + pg, plain statements', peer, {
      applicationName: 'bench-peer',
      schema: pr.schema,
    }),
  };
}

const peerCredentials = {
  BENCH_APP_ID: parties.appId,
  BENCH_MINIAPP_SECRET: parties.miniappSecret,
  BENCH_CLIENT_ID: parties.clientId,
  BENCH_HOSTAPP_SECRET: parties.hostappSecret,
};

/** One path, its contenders measured in interleaved rounds, and its ratios. */
async function measurePath(
  path: Path,
  contenders: Contender[],
  observer: PostgresObserver | undefined,
  pacedOn: Set<string> = new Set(),
): Promise<PathResult> {
  log(`${path.id}: ${contenders.map((c) => c.name).join(', ')}; ${settings.rounds} rounds`);
  // BENCH_GC_TRACE: the Minibridge processes' phases, marked `# <contender> <path>-r<round>-<phase>` (bench/gc-summary.ts).
  const mark = (c: Contender, phase: string) => c.name.startsWith('minibridge') && processes.traceLine(`# ${c.name} ${phase}`);
  for (const c of contenders) {
    mark(c, `${path.id}-first-warm-up`);
    await path.run(c, settings.firstWarmupSeconds);
    mark(c, 'end');
  }
  // Every paced request's latency, per contender, for the pooled p99 (report.ts RatioResult).
  const pacedLatencies = new Map<string, number[]>();
  const samples = await interleave(contenders, settings.rounds, async (c, round) => {
    mark(c, `${path.id}-r${round + 1}-warm-up`);
    await path.run(c, settings.warmupSeconds);
    mark(c, `${path.id}-r${round + 1}-saturated`);
    const sample: Sample = await accounted(c, observer, () => path.run(c, settings.durationSeconds), ours);
    if (pacedOn.has(c.name)) {
      mark(c, `${path.id}-r${round + 1}-settle`);
      await new Promise((resolve) => setTimeout(resolve, settings.pacedSettleSeconds * 1000));
      mark(c, `${path.id}-r${round + 1}-paced`);
      const steady = await paced({
        url: c.endpoint ?? c.url + E1_PATH,
        headers: miniappHeaders,
        body: e1BodyTemplate(),
        connections: settings.connections,
        durationSeconds: settings.pacedSeconds,
        rate: settings.pacedRate,
      });
      sample.pacedP99Ms = steady.latencyP99Ms;
      pacedLatencies.set(c.name, [...(pacedLatencies.get(c.name) ?? []), ...steady.latenciesMs]);
      sample.failures += steady.failures;
    }
    mark(c, 'end');
    log(
      `${path.id} round ${round + 1} ${c.name}: ${sample.opsPerSecond.toFixed(0)} ${path.unit}/s` +
        (sample.cpuMsPerOp ? `, ${(sample.cpuMsPerOp.process + (sample.cpuMsPerOp.postgres ?? 0)).toFixed(3)} ms CPU` : '') +
        (sample.pacedP99Ms !== undefined ? `, paced p99 ${sample.pacedP99Ms.toFixed(1)} ms` : '') +
        (sample.foreignCores !== undefined ? `, other work ${sample.foreignCores.toFixed(2)} cores` : '') +
        (sample.failures ? `, ${sample.failures} failures` : '') +
        (sample.problems ? `, ${sample.problems.join('; ')}` : ''),
    );
    return sample;
  });
  const rounds = contenders.map((c) => {
    const peak = c.peakRssBytes?.();
    const latencies = pacedLatencies.get(c.name);
    return {
      name: c.name,
      role: c.role,
      note: c.note,
      samples: samples.get(c.name)!,
      peakRssMiB: peak === undefined ? undefined : peak / 1024 / 1024,
      ...(latencies && { pacedP99PooledMs: percentile(latencies, 99) }),
    };
  });
  return { id: path.id, title: path.title, unit: path.unit, contenders: rounds, ratios: pathRatios(rounds) };
}

/** The subject's throughput and CPU per operation against its durable limit and its peer, and PGlite's against PostgreSQL. */
function pathRatios(rounds: PathResult['contenders']): RatioResult[] {
  const subject = rounds.find((c) => c.role === 'subject');
  if (!subject) return [];
  const cpu = (s: Sample) => (s.cpuMsPerOp?.postgres === undefined ? undefined : s.cpuMsPerOp.process + s.cpuMsPerOp.postgres);
  const ratios: RatioResult[] = [];
  for (const other of rounds.filter((c) => c !== subject && c.role !== 'reference')) {
    ratios.push({
      of: subject.name,
      to: other.name,
      metric: 'throughput',
      value: pairedRatio(
        subject.samples.map((s) => s.opsPerSecond),
        other.samples.map((s) => s.opsPerSecond),
      ),
    });
    if (other.role === 'durable')
      ratios.push({
        of: subject.name,
        to: other.name,
        metric: 'cpu',
        value: pairedRatio(subject.samples.map(cpu), other.samples.map(cpu)),
      });
  }
  const pglite = rounds.find((c) => c.name === 'minibridge-pglite');
  if (pglite)
    ratios.push({
      of: pglite.name,
      to: subject.name,
      metric: 'throughput',
      value: pairedRatio(
        pglite.samples.map((s) => s.opsPerSecond),
        subject.samples.map((s) => s.opsPerSecond),
      ),
    });
  const direct = rounds.find((c) => c.name === 'direct');
  const durable = rounds.find((c) => c.role === 'durable');
  if (direct && durable && subject.pacedP99PooledMs !== undefined && durable.pacedP99PooledMs !== undefined) {
    const added = (c: PathResult['contenders'][number]) =>
      c.samples.map((s, round) => (s.pacedP99Ms ?? NaN) - (direct.samples[round]!.pacedP99Ms ?? NaN));
    // The verdict pools the rounds' requests: a round's p99 rests on its 8 slowest of 800.
    const pooled = addedRatio(subject.pacedP99PooledMs, durable.pacedP99PooledMs, direct.pacedP99PooledMs ?? Number.NaN);
    ratios.push({
      of: subject.name,
      to: durable.name,
      metric: 'paced p99 added',
      value: { ...pairedRatio(added(subject), added(durable)), median: pooled, across: 'pooled' },
    });
  }
  return ratios;
}

async function main(): Promise<BenchResults> {
  const miniapp = await processes.other('fakes/miniappProcess.ts');
  const hostapp = await processes.other('fakes/hostapp.ts');
  writeRegistry(registryFile, hostapp.url, miniapp.url);
  const observer = await observePostgres(databaseUrl).catch(() => undefined);
  if (!observer)
    notes.push(`PostgreSQL at ${databaseUrl.replace(/\/\/[^@]*@/, '//')} is unreachable: every part on PostgreSQL was skipped.`);
  ours = async () => [process.pid, ...processes.pids(), ...((await observer?.benchBackendPids()) ?? [])];
  const context: BenchContext = { processes, observer, databaseUrl, hostapp, miniapp, workDir, minibridgeEnv, notes, log, ours };
  const options: PathOptions = { connections: settings.connections, miniappUrl: miniapp.url, drainTimeoutMs: settings.drainTimeoutMs };
  const paths: PathResult[] = [];
  const onPostgres: Part[] = ['e1', 'e2', 'payment', 'e8', 'miniapp-event', 'e6'];
  const main = observer && onPostgres.some(runs) ? await startPostgresContenders(hostapp, miniapp) : undefined;

  if (runs('e1')) {
    const partners = { BENCH_HOSTAPP_URL: hostapp.url };
    const limit = await processes.other('contenders/limit.ts', partners);
    const statelessPeer = await processes.other('peer/server.ts', { ...partners, ...peerCredentials });
    const pglite = await processes.platform(minibridgeEnv({ dir: join(workDir, 'pglite') }), true);
    const direct: Contender = {
      name: 'direct',
      role: 'reference',
      note: 'the fake host app E3 called directly, no forwarder',
      url: hostapp.url,
      endpoint: `${hostapp.url}/create-order-payment`,
    };
    const e1Contenders: Contender[] = [
      direct,
      contender('limit', 'reference', 'raw node:http forwarder, writes nothing: reference only', limit),
      ...(main ? [main.durable] : []),
      contender('peer', 'peer', 'Express + express-openapi-validator + fetch, stores nothing', statelessPeer),
      ...(main ? [main.minibridge] : []),
      contender('minibridge-pglite', 'reference', 'embedded PGlite', pglite),
    ];
    paths.push(await measurePath(e1Path(options), e1Contenders, observer, new Set(['direct', 'durable-limit', 'minibridge-postgres'])));
    for (const server of [limit, statelessPeer, pglite]) await processes.stop(server);
  }
  if (main) {
    const trio = [main.durable, main.peer, main.minibridge];
    if (runs('e2')) {
      log(`e2: creating ${settings.e2Payments} payments in process through each contender`);
      const seeds = new Map<string, string[]>();
      for (const c of trio) seeds.set(c.name, await createOrders(c.url, settings.e2Payments, 32, `e2-${c.name}-${Date.now()}`));
      paths.push(
        await measurePath(
          e2Path(options, (c) => seeds.get(c.name)!),
          trio,
          observer,
        ),
      );
    }
    if (runs('payment')) paths.push(await measurePath(paymentPath(options), trio, observer));
    if (runs('e8')) paths.push(await measurePath(eventPath(options, 'e8'), trio, observer));
    if (runs('miniapp-event')) paths.push(await measurePath(eventPath(options, 'miniapp-event'), trio, observer));
  }

  const e6 = observer && runs('e6') ? await e6Phase(context, main) : undefined;
  if (main) for (const server of main.servers) await processes.stop(server);
  let reconcile: BenchResults['reconcile'];
  if (observer && runs('reconcile')) {
    const sweep: Path = {
      ...e1Path(options),
      id: 'e1-sweep',
      title: `E1 while reconciliation sweeps ${settings.reconcileStale} stale payments, against the same without`,
    };
    const { e1, ...figures } = await reconcilePhase(context, {
      measure: (contenders) => measurePath(sweep, contenders, observer),
      schemaFor,
      contender,
    });
    paths.push(e1);
    reconcile = figures;
  }
  const twoInstances = observer && runs('two') ? await twoInstancesPhase(context) : undefined;
  const ready = runs('startup') ? await startupPhase(context, mode === 'compiled') : undefined;
  await processes.stopAll();
  await observer?.close();

  const results: BenchResults = {
    schema: 2,
    machine,
    commit: commitOf(),
    settings: {
      ...settings,
      minibridgeProcess: mode === 'compiled' ? 'node on the compiled dist/' : 'node --import tsx (dist/ not current)',
    },
    paths,
    e6,
    twoInstances,
    ready,
    reconcile,
    capacity: capacityFigures(paths, e6),
    targets: [],
    notes,
  };
  results.targets = targets(results);
  notes.push(...standingNotes(results));
  return results;
}

function commitOf(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: here, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha} with uncommitted changes` : sha;
  } catch {
    return 'unknown';
  }
}

function standingNotes(results: BenchResults): string[] {
  return [
    `Every contender runs in its own Node process, as do the fake host app, the fake miniapp server and the proxy; autocannon runs in the benchmark process. ${
      mode === 'compiled'
        ? 'Minibridge runs as a deployment runs it, `node` on the compiled dist/ (ADR 0035); the other processes are compiled by tsc the same way for the run.'
        : 'All of them through `node --import tsx` (dist/ did not match the sources in this run).'
    } Peak RSS is the process's VmHWM over the whole run.`,
    `Rounds: each path's contenders are measured once per round (${results.settings.rounds} rounds), the order reversed every other round; each run is a ${settings.warmupSeconds} s warm-up and ${settings.durationSeconds} s measured at ${settings.connections} connections. A ratio is the median of its per-round ratios, its range beside it, except the paced p99 added (its rounds' requests pooled) and the E5 → E6 latency (the ratio of the two medians; bench/README.md).`,
    "CPU per operation: user + system time from /proc/<pid>/stat over the measured run, divided by its operations; PostgreSQL counts only the backends whose connections carry the contender's application_name (other sessions share the server). WAL bytes are the server's WAL position moved over the run (other sessions' writes included, so the capacity model takes the smallest round); stored bytes are the growth of the contender's own schema (tables, indexes, TOAST).",
    `"paced p99" is the p99 of ${settings.pacedRate} E1/s sent at even intervals for ${settings.pacedSeconds} s, ${settings.pacedSettleSeconds} s after each measured run ends (open loop, at most ${settings.connections} connections, latency from each request's scheduled start): latency without queueing. "Added" is that minus the direct host call's paced p99; the verdict takes each contender's p99 over all its rounds' paced requests together, the range beside it is per round.`,
    `The per-partner rate limit is raised for the run (one app_id sends everything); Minibridge logs at ${settings.logLevel}.`,
  ];
}

try {
  const results = await main();
  const resultsDir = join(here, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const latest = join(resultsDir, 'latest.json');
  const against = process.env.BENCH_COMPARE ?? (existsSync(latest) ? latest : undefined);
  if (against) {
    const earlier = JSON.parse(readFileSync(against, 'utf8')) as BenchResults;
    if (earlier.schema === 2)
      results.agreement = { with: `the run of ${earlier.machine.date} (${earlier.commit})`, rows: compareResults(earlier, results) };
  }
  const table = markdown(results);
  if (!only) {
    writeFileSync(latest, `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(resultsDir, 'latest.md'), table);
  }
  process.stdout.write(table);
} finally {
  await processes.stopAll();
  for (const drop of dropSchemas) await drop().catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
}
