import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** An entry script running in its own Node process, announcing `READY <url>` on stdout. */
export interface ChildServer {
  url: string;
  pid: number;
  process: ChildProcess;
  /** Milliseconds from spawn to the READY line. */
  startedInMs: number;
  /** Peak resident set size so far (VmHWM), in bytes; undefined where /proc is not available. */
  peakRssBytes(): number | undefined;
  /** Current resident set size (VmRSS), in bytes. */
  rssBytes(): number | undefined;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export interface ChildOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra `node` flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
  readyTimeoutMs?: number;
  /** Lines the child writes besides READY (logs), for diagnosis. */
  onLine?: (line: string) => void;
  /**
   * 'tsx' (default) compiles a TypeScript entry on the fly; 'node' runs a JavaScript entry as is,
   * e.g. one that loads the compiled `dist/` a deployment runs.
   */
  loader?: 'tsx' | 'node';
}

export async function startChild(script: string, options: ChildOptions = {}): Promise<ChildServer> {
  const spawnedAt = performance.now();
  const loaderFlags = (options.loader ?? 'tsx') === 'tsx' ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), ...loaderFlags, script], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr.push(line);
    if (stderr.length > 50) stderr.shift();
    options.onLine?.(line);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${script} did not print READY within ${options.readyTimeoutMs ?? 30_000} ms`)),
      options.readyTimeoutMs ?? 30_000,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${stderr.join('\n')}`));
    };
    child.once('exit', (code, signal) => fail(new Error(`${script} exited (${code ?? signal}) before READY`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const ready = /^READY (\S+)/.exec(line);
      if (ready) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(ready[1]!);
      } else options.onLine?.(line);
    });
  });
  const startedInMs = performance.now() - spawnedAt;
  const exited = new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
  return {
    url,
    pid: child.pid!,
    process: child,
    startedInMs,
    peakRssBytes: () => procStatusKb(child.pid!, 'VmHWM'),
    rssBytes: () => procStatusKb(child.pid!, 'VmRSS'),
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

function procStatusKb(pid: number, field: string): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
