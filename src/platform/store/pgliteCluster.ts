import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createHash, randomBytes } from 'node:crypto';
import { constants as fsConstants, existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defaultMigrationsDir, loadMigrations, type Migration } from './migrationFiles.js';

/**
 * A fresh PGlite data directory without initdb in the serving process (ADR 0021).
 *
 * PGlite runs initdb in a second WebAssembly instance inside the process that opens a directory
 * holding no cluster: 11–28 s and ~920 MiB peak RSS on a fresh clone, memory the serving process
 * then keeps. Instead, a fresh directory is copied from a template cluster: a plain file copy,
 * then PGlite opens an existing directory. The template is made by initdb and then the
 * store's migrations in a short-lived child process, so a fresh start finds its schema in place
 * (ADR 0026), under node_modules/.cache (a cache, never committed: initdb output is not
 * byte-reproducible). It is keyed by the installed PGlite version (its cluster format) and a
 * hash of the migration files: a new migration names a new template, and a template is never
 * changed once published (node_modules may be hard-linked between checkouts). A directory made
 * from an older template is brought up to date by the migration runner at start, as any
 * existing directory is. `npm install` / `npm ci` make the template ahead (the `prepare`
 * script); when it is missing, the first fresh start makes it, still outside the serving process.
 */

// The package exports neither package.json nor a path: its entry's directory locates both.
const pgliteDir = dirname(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')));

/** What a template is made from: the installed PGlite version and the migrations it holds. */
function templateKey(migrations: readonly Migration[]): string {
  const { version } = JSON.parse(readFileSync(join(pgliteDir, 'package.json'), 'utf8')) as { version: string };
  const hash = createHash('sha256');
  for (const migration of migrations) hash.update(`${migration.name}\0${migration.sql}\0`);
  return `pglite-${version}-migrated-${hash.digest('hex').slice(0, 16)}`;
}

/** Where templates are made and what they hold; tests name their own. */
export interface TemplateSource {
  /** The migrations a template holds (default: the store's). */
  migrationsDir?: string;
  /** Where templates are kept (default: node_modules/.cache/minibridge). */
  cacheDir?: string;
}

// .../node_modules/@electric-sql/pglite → .../node_modules/.cache/minibridge
const defaultCacheDir = join(dirname(dirname(pgliteDir)), '.cache', 'minibridge');

/** Where the template cluster for the installed PGlite version and these migrations lives. */
export function pgliteTemplateDir(migrations: readonly Migration[], cacheDir = defaultCacheDir): string {
  return join(cacheDir, templateKey(migrations));
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

/** The child's module, beside this one: `.ts` under tsx or vitest, `.js` once compiled. */
const childModule = fileURLToPath(new URL(`./pgliteTemplateChild${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/**
 * Runs initdb and the migrations for `dir` in a child process, so their memory (two WebAssembly
 * instances during initdb) is returned when the child exits.
 */
function buildInChild(...args: string[]): Promise<void> {
  // TypeScript sources need tsx's loader in the child too (the parent may run under vitest).
  const loader = childModule.endsWith('.ts') ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...loader, childModule, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`the PGlite template (${args.join(' ')}) was not made (${code ?? signal}): ${stderr.trim()}`)),
    );
  });
}

/** Makes the template cluster when it is missing; returns its directory. */
export async function ensurePgliteTemplate({ migrationsDir = defaultMigrationsDir, cacheDir }: TemplateSource = {}): Promise<string> {
  const template = pgliteTemplateDir(await loadMigrations(migrationsDir), cacheDir);
  if (holdsCluster(template)) return template;
  await mkdir(dirname(template), { recursive: true });
  const built = scratch(template);
  try {
    await buildInChild(built, migrationsDir);
  } catch (error) {
    await rm(built, { recursive: true, force: true });
    throw error;
  }
  await publish(built, template);
  return template;
}

/**
 * The template cluster as the archive PGlite loads into memory (`loadDataDir`), so a `memory://`
 * database starts from the migrated template too instead of running initdb in this process
 * (3–5 CPU-seconds and initdb's memory per database; ADR 0021). Made once beside the template,
 * in a child process that opens a copy of it (PGlite writes into the directory it opens, and a
 * template never changes), and published by rename like the template.
 */
export async function pgliteTemplateArchive(source: TemplateSource = {}): Promise<Blob> {
  const template = await ensurePgliteTemplate(source);
  const archive = `${template}.tar`;
  if (!existsSync(archive)) {
    const built = scratch(archive);
    try {
      await buildInChild('--archive', template, built);
      await rename(built, archive);
    } finally {
      await rm(built, { force: true });
    }
  }
  return new Blob([await readFile(archive)]);
}

/**
 * Copies a cluster: directories and regular files only (a cluster holds nothing else), every file
 * of a directory at once. fs.cp checks and copies one entry after another: 3.4 s for the
 * template's ~1,000 files on a loaded machine, most of a fresh start (ADR 0026).
 */
export async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(to);
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map((entry) => {
      const [source, target] = [join(from, entry.name), join(to, entry.name)];
      if (entry.isDirectory()) return copyTree(source, target);
      if (!entry.isFile()) throw new Error(`the PGlite template holds ${source}, neither a file nor a directory`);
      // A copy-on-write clone where the file system offers one (btrfs, XFS, APFS), else a plain copy.
      return copyFile(source, target, fsConstants.COPYFILE_FICLONE);
    }),
  );
}

/**
 * Gives a missing or empty `dataDir` a fresh cluster copied from the template. A directory
 * holding anything else is left to PGlite as it is.
 */
export async function preparePgliteDataDir(dataDir: string, source: TemplateSource = {}): Promise<void> {
  if (holdsCluster(dataDir)) return;
  const entries = await readdir(dataDir).catch(() => undefined);
  if (entries !== undefined && entries.length > 0) return;
  const template = await ensurePgliteTemplate(source);
  await mkdir(dirname(dataDir), { recursive: true });
  const built = scratch(dataDir);
  await copyTree(template, built);
  // Only an empty directory is removed: a cluster another process published meanwhile stays.
  if (entries !== undefined) await rmdir(dataDir).catch(() => undefined);
  await publish(built, dataDir);
}
