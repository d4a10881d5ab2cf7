import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * A fresh PGlite data directory without initdb in the serving process (issue 12, ADR 0021).
 *
 * PGlite runs initdb in a second WebAssembly instance inside the process that opens a directory
 * holding no cluster: 11–28 s and ~920 MiB peak RSS on a fresh clone, memory the serving process
 * then keeps. Instead, a fresh directory is copied from a template cluster: a plain file copy,
 * then PGlite opens an existing directory. The template is made once per installed PGlite
 * version (its cluster format), by initdb in a short-lived child process, under
 * node_modules/.cache (a cache, never committed: initdb output is not byte-reproducible).
 * `npm install` / `npm ci` make it ahead (the `prepare` script); when it is missing, the first
 * fresh start makes it, still outside the serving process.
 */

// The package exports neither package.json nor a path: its entry's directory locates both.
const pgliteDir = dirname(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')));

/** Where the template cluster for the installed PGlite version lives. */
export function pgliteTemplateDir(): string {
  const { version } = JSON.parse(readFileSync(join(pgliteDir, 'package.json'), 'utf8')) as { version: string };
  // .../node_modules/@electric-sql/pglite → .../node_modules
  const nodeModules = dirname(dirname(pgliteDir));
  return join(nodeModules, '.cache', 'minibridge', `pglite-${version}-cluster`);
}

function holdsCluster(dir: string): boolean {
  return existsSync(join(dir, 'PG_VERSION'));
}

/** A sibling path for building `dir` before it is renamed into place (a rename is atomic). */
function scratch(dir: string): string {
  return `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Puts `built` at `dir` unless another process got there first (then `built` is discarded). */
async function publish(built: string, dir: string): Promise<void> {
  try {
    await rename(built, dir);
  } catch (error) {
    await rm(built, { recursive: true, force: true });
    if (!holdsCluster(dir)) throw error;
  }
}

/** Runs initdb for `dir` in a child process, so its memory is returned when the child exits. */
function initdbInChild(dir: string): Promise<void> {
  const entry = pathToFileURL(join(pgliteDir, 'dist', 'index.js')).href;
  const program = `const { PGlite } = await import(${JSON.stringify(entry)});
    const db = await PGlite.create(process.argv[1]);
    await db.close();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', program, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`initdb for ${dir} failed (${code ?? signal}): ${stderr.trim()}`)),
    );
  });
}

/** Makes the template cluster when it is missing; returns its directory. */
export async function ensurePgliteTemplate(): Promise<string> {
  const template = pgliteTemplateDir();
  if (holdsCluster(template)) return template;
  await mkdir(dirname(template), { recursive: true });
  const built = scratch(template);
  try {
    await initdbInChild(built);
  } catch (error) {
    await rm(built, { recursive: true, force: true });
    throw error;
  }
  await publish(built, template);
  return template;
}

/**
 * Gives a missing or empty `dataDir` a fresh cluster copied from the template. A directory
 * holding anything else is left to PGlite as it is.
 */
export async function preparePgliteDataDir(dataDir: string): Promise<void> {
  if (holdsCluster(dataDir)) return;
  const entries = await readdir(dataDir).catch(() => undefined);
  if (entries !== undefined && entries.length > 0) return;
  const template = await ensurePgliteTemplate();
  await mkdir(dirname(dataDir), { recursive: true });
  const built = scratch(dataDir);
  await cp(template, built, { recursive: true });
  // Only an empty directory is removed: a cluster another process published meanwhile stays.
  if (entries !== undefined) await rmdir(dataDir).catch(() => undefined);
  await publish(built, dataDir);
}
