import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * The embedded database as the store uses it: PGlite's own calls, answered by a PGlite that runs
 * on a thread of its own (ADR 0047). PGlite is PostgreSQL compiled to WebAssembly; on the thread
 * that serves requests it ran every statement to its commit while no request could be read, and a
 * second core stayed idle. On its own thread it works while requests are read and answered, as
 * PostgreSQL's backends do in processes of their own.
 */
export interface EmbeddedPglite {
  /** True once closed, or once its thread has ended. */
  readonly closed: boolean;
  query<T>(sql: string, params?: readonly unknown[]): Promise<{ rows: T[] }>;
  /** A script of several statements without parameters. */
  exec(sql: string): Promise<void>;
  /** Runs fn in one transaction, as PGlite's transaction(): other statements wait for its end. */
  transaction<T>(fn: (tx: EmbeddedTransaction) => Promise<T>): Promise<T>;
  /** The data directory as an archive PGlite loads (`loadDataDir`). */
  dumpDataDir(): Promise<Blob>;
  close(): Promise<void>;
}

export type EmbeddedTransaction = Pick<EmbeddedPglite, 'query' | 'exec'>;

export interface EmbeddedPgliteOptions {
  /** postgresql.conf settings PGlite writes on every open. */
  postgresqlconf: string;
  /** An archive to fill a fresh (`memory://`) data directory from. */
  loadDataDir?: Blob;
}

/** A message to the thread: an operation on the database, or on one open transaction. */
type Request =
  | { id: number; op: 'query'; sql: string; params: readonly unknown[]; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin' | 'commit' | 'rollback'; tx: number }
  | { id: number; op: 'dump' | 'close' };

/** A request without its id, which call() gives it. */
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: Record<string, unknown> };

/**
 * The thread's program, plain JavaScript so it runs the same under every loader (node on dist/,
 * tsx, vitest): it imports PGlite by the file this module resolved, creates it from the compiled
 * WebAssembly module it is handed (compiled once per process, shared by every thread), then
 * answers one message per operation. A transaction is PGlite's own transaction(), held open
 * until its commit or rollback arrives, so PGlite's lock keeps every other statement waiting.
 */
const threadProgram = `
const { parentPort, workerData } = require('node:worker_threads');
const transactions = new Map();
const failure = (error) => {
  const fields = { message: String(error && error.message || error), name: error && error.name };
  if (error && typeof error === 'object')
    for (const key of Object.keys(error)) {
      const value = error[key];
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
    }
  return fields;
};
const answer = (id, work) =>
  Promise.resolve()
    .then(work)
    .then(
      (value) => parentPort.postMessage({ id, ok: true, value }),
      (error) => parentPort.postMessage({ id, ok: false, error: failure(error) }),
    );
(async () => {
  const { PGlite } = await import(workerData.pgliteUrl);
  const pglite = await PGlite.create(workerData.dataDir, workerData.options);
  parentPort.on('message', (message) => {
    const on = message.tx === undefined ? pglite : transactions.get(message.tx)?.tx;
    switch (message.op) {
      case 'query':
        return answer(message.id, () => on.query(message.sql, message.params).then((result) => result.rows));
      case 'exec':
        return answer(message.id, () => on.exec(message.sql).then(() => null));
      case 'begin': {
        let began = false;
        const ended = pglite.transaction(
          (tx) =>
            new Promise((resolve, reject) => {
              began = true;
              transactions.set(message.tx, { tx, resolve, reject, ended });
              parentPort.postMessage({ id: message.id, ok: true, value: null });
            }),
        );
        ended.catch((error) => {
          if (!began) parentPort.postMessage({ id: message.id, ok: false, error: failure(error) });
        });
        return;
      }
      case 'commit':
      case 'rollback': {
        const open = transactions.get(message.tx);
        transactions.delete(message.tx);
        if (message.op === 'commit') open.resolve();
        else open.reject(Object.assign(new Error('rolled back'), { rolledBack: true }));
        return answer(message.id, () =>
          open.ended.then(
            () => null,
            (error) => {
              if (!(message.op === 'rollback' && error && error.rolledBack)) throw error;
              return null;
            },
          ),
        );
      }
      case 'dump':
        return answer(message.id, () => pglite.dumpDataDir('none'));
      case 'close':
        return answer(message.id, () => pglite.close());
    }
  });
  parentPort.postMessage({ ready: true });
})().catch((error) => parentPort.postMessage({ ready: false, error: failure(error) }));
`;

const requireHere = createRequire(import.meta.url);
/** PGlite's module (its CommonJS build: the thread's program is CommonJS) and its WebAssembly. */
const pgliteEntry = requireHere.resolve('@electric-sql/pglite');
/** A compiled WebAssembly.Module: threads share it, each instantiating its own memory. */
type CompiledWasm = object;
/** The global WebAssembly, which the project's libraries (ES2023, Node) do not declare. */
const webAssembly = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledWasm> } }).WebAssembly;
let compiledWasm: Promise<CompiledWasm> | undefined;
function pgliteWasm(): Promise<CompiledWasm> {
  compiledWasm ??= readFile(requireHere.resolve('@electric-sql/pglite/pglite.wasm')).then((bytes) => webAssembly.compile(bytes));
  return compiledWasm;
}

/** What a closed or failed embedded database answers; availability.ts knows the words. */
const closedError = () => new Error('PGlite is closed');

function rebuilt(fields: Record<string, unknown>): Error {
  const { message, name, stack: _stack, ...rest } = fields;
  const error = Object.assign(new Error(String(message)), rest);
  if (typeof name === 'string' && name !== 'Error') Object.defineProperty(error, 'name', { value: name, configurable: true });
  return error;
}

/** Starts PGlite on `dataDir` on a thread of its own; resolves once it is open. */
export async function startEmbeddedPglite(dataDir: string, options: EmbeddedPgliteOptions): Promise<EmbeddedPglite> {
  const worker = new Worker(threadProgram, {
    eval: true,
    workerData: {
      pgliteUrl: pathToFileURL(pgliteEntry).href,
      dataDir,
      options: { ...options, pgliteWasmModule: await pgliteWasm() },
    },
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  let nextTx = 1;
  let closed = false;
  let ended: Error | undefined;

  const endAll = (error: Error) => {
    closed = true;
    ended ??= error;
    for (const waiting of pending.values()) waiting.reject(closedError());
    pending.clear();
  };
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`PGlite's thread ended (exit code ${code}) before the database opened`));
    worker.once('exit', onExit);
    worker.once('error', reject);
    worker.once('message', (message: { ready: boolean; error?: Record<string, unknown> }) => {
      worker.off('exit', onExit);
      worker.off('error', reject);
      if (message.ready) resolve();
      else reject(rebuilt(message.error ?? { message: 'PGlite did not open' }));
    });
  });
  // From here the thread keeps the process alive only while an answer is awaited: an open
  // database no one is using holds no process up, as PGlite on the serving thread did not.
  worker.unref();
  worker.on('message', (reply: Reply) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(rebuilt(reply.error));
  });
  // A thread that fails (an abort inside the WebAssembly, memory exhausted) ends the database:
  // every statement waiting and every later one fails as on a closed PGlite, which the
  // availability probe reports (ADR 0037).
  worker.on('error', (error) => endAll(error));
  worker.on('exit', () => endAll(closedError()));

  function call<T>(request: Unnumbered<Request>): Promise<T> {
    if (closed) return Promise.reject(closedError());
    const id = nextId++;
    if (pending.size === 0) worker.ref();
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        worker.postMessage({ ...request, id });
      } catch (error) {
        // A parameter that cannot be copied to the thread (a function, say): never sent.
        pending.delete(id);
        if (pending.size === 0) worker.unref();
        reject(error as Error);
      }
    });
  }

  const on = (tx?: number): EmbeddedTransaction => ({
    async query<T>(sql: string, params: readonly unknown[] = []) {
      return { rows: await call<T[]>({ op: 'query', sql, params, tx }) };
    },
    async exec(sql: string) {
      await call({ op: 'exec', sql, tx });
    },
  });

  return {
    get closed() {
      return closed;
    },
    ...on(),
    async transaction<T>(fn: (tx: EmbeddedTransaction) => Promise<T>): Promise<T> {
      const tx = nextTx++;
      await call({ op: 'begin', tx });
      let result: T;
      try {
        result = await fn(on(tx));
      } catch (error) {
        await call({ op: 'rollback', tx }).catch(() => undefined);
        throw error;
      }
      await call({ op: 'commit', tx });
      return result;
    },
    dumpDataDir: () => call<Blob>({ op: 'dump' }),
    async close() {
      if (closed) return;
      try {
        await call({ op: 'close' });
      } finally {
        closed = true;
        await worker.terminate();
      }
    },
  };
}
