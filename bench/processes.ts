/**
 * The bench's processes: every contender, fake partner and proxy runs in a Node process of its
 * own, so its CPU (/proc) and peak RSS (VmHWM) are its own. Minibridge runs as a deployment runs
 * it, on the compiled dist/ while it matches the sources (ADR 0035); the others are then compiled
 * by tsc for the run the same way, so every process runs plain JavaScript.
 */
import { appendFileSync, cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, type ChildServer } from '../test/resilience/support/childProcess.js';
import { compiledIsCurrent } from '../scripts/lib/compiled-is-current.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..');
/** The platform as a process, configured from the environment like production (shared with the crash tests). */
const PLATFORM_PROCESS = '../test/resilience/platform-process.ts';
/** Entry scripts other than Minibridge, by the path the bench knows them by. */
const OTHERS = [
  'contenders/limit.ts',
  'contenders/durableLimit.ts',
  'peer/server.ts',
  'fakes/hostapp.ts',
  'fakes/miniappProcess.ts',
  'proxy/roundRobinProcess.ts',
] as const;
export type OtherScript = (typeof OTHERS)[number];

export interface ProcessOptions {
  /** BENCH_CPU_PROF: --cpu-prof the Minibridge processes into this directory. */
  cpuProfileDir?: string;
  /** BENCH_CPU_PROF_ALL: profile every other process too (the contenders, the fakes), to compare with. */
  profileOthers?: boolean;
  /** BENCH_GC_TRACE: V8's GC trace of the Minibridge processes into this file. */
  gcTrace?: string;
}

/**
 * How the Minibridge contenders run: compiled while dist/ matches the sources, else through tsx
 * (which also renames every nested function at run time, esbuild's keepNames), and the notes say
 * so; BENCH_PLATFORM=tsx|compiled chooses.
 */
export function platformMode(chosen = process.env.BENCH_PLATFORM): 'compiled' | 'tsx' {
  const current = compiledIsCurrent(root);
  const mode = chosen ?? (current ? 'compiled' : 'tsx');
  if (mode !== 'compiled' && mode !== 'tsx') throw new Error(`BENCH_PLATFORM: compiled or tsx, not ${mode}`);
  if (mode === 'compiled' && !current)
    throw new Error('BENCH_PLATFORM=compiled, but dist/ does not match the sources: rebuild it with tsx scripts/build-dist.ts');
  return mode;
}

export function createProcesses(mode: 'compiled' | 'tsx', options: ProcessOptions = {}) {
  const running: ChildServer[] = [];
  const compiled = new Map<string, string>();
  const traceLine = (line: string) => {
    if (options.gcTrace) appendFileSync(options.gcTrace, `${Date.now()} ${line}\n`);
  };

  if (mode === 'compiled') {
    const outDir = join(root, 'node_modules', '.cache', 'minibridge', 'bench-compiled');
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const tsconfig = join(outDir, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: { noEmit: false, rootDir: root, outDir, declaration: false, sourceMap: false },
        files: OTHERS.map((entry) => join(here, entry)),
      }),
    );
    execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', tsconfig], { stdio: 'inherit' });
    // tsc copies no SQL: the durable limit migrates its schema with the store's migrations.
    cpSync(join(root, 'src/platform/store/migrations'), join(outDir, 'src/platform/store/migrations'), { recursive: true });
    for (const entry of OTHERS) compiled.set(entry, join(outDir, 'bench', entry.replace(/\.ts$/, '.js')));
  }

  async function child(script: string, env: NodeJS.ProcessEnv, profile: boolean, loader: 'tsx' | 'node'): Promise<ChildServer> {
    const nodeFlags = [
      ...((profile || options.profileOthers) && options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : []),
      ...(profile && options.gcTrace ? ['--trace-gc', '--trace-gc-nvp'] : []),
    ];
    const started = await startChild(isAbsolute(script) ? script : join(here, script), {
      env,
      nodeFlags,
      readyTimeoutMs: 120_000,
      loader,
      onLine: profile && options.gcTrace ? traceLine : undefined,
    });
    running.push(started);
    return started;
  }

  return {
    traceLine,
    /** A contender other than Minibridge, a fake partner or the proxy. */
    other(script: OtherScript, env: NodeJS.ProcessEnv = {}): Promise<ChildServer> {
      const entry = compiled.get(script);
      return entry ? child(entry, env, false, 'node') : child(script, env, false, 'tsx');
    },
    /** A Minibridge instance configured from `env`; `profile` applies BENCH_CPU_PROF and BENCH_GC_TRACE. */
    platform(env: NodeJS.ProcessEnv, profile = false): Promise<ChildServer> {
      return mode === 'compiled'
        ? child('contenders/compiledPlatform.mjs', env, profile, 'node')
        : child(PLATFORM_PROCESS, env, profile, 'tsx');
    },
    async stop(server: ChildServer): Promise<void> {
      await server.stop(15_000);
      running.splice(running.indexOf(server), 1);
    },
    /** The processes running now. */
    pids(): number[] {
      return running.map((server) => server.pid);
    },
    async stopAll(): Promise<void> {
      await Promise.all(running.splice(0).map((server) => server.stop(2_000)));
    },
  };
}
export type Processes = ReturnType<typeof createProcesses>;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}

export async function waitForReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (performance.now() > deadline) throw new Error(`${url}/readyz not 200 within ${timeoutMs} ms`);
    const response = await fetch(`${url}/readyz`).catch(() => undefined);
    if (response?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A DATABASE_URL whose connections carry `name` as application_name, so their backends can be found. */
export function withApplicationName(url: string, name: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', name);
  return named.toString();
}
