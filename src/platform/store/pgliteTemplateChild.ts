/**
 * Makes a PGlite template cluster (ADR 0021, ADR 0026): initdb, then the store's migrations, in a
 * process of its own that exits when done, so the serving process never holds initdb's memory.
 * Arguments: the directory to make (it must not hold a cluster) and the migrations directory;
 * or `--archive`, a template directory and the file to write: the template as the archive a
 * `memory://` database loads (pgliteTemplateArchive), dumped from a copy of the template.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPglite, pgliteDb } from './db.js';
import { migrate } from './migrate.js';
import { copyTree } from './pgliteCluster.js';

const args = process.argv.slice(2);
if (args[0] === '--archive') {
  const [, template, archive] = args;
  if (!template || !archive) throw new Error('usage: pgliteTemplateChild --archive <template directory> <archive file>');
  const scratch = await mkdtemp(join(tmpdir(), 'minibridge-template-'));
  try {
    const copy = join(scratch, 'cluster');
    await copyTree(template, copy);
    const pglite = await createPglite(copy);
    await writeFile(archive, Buffer.from(await (await pglite.dumpDataDir()).arrayBuffer()));
    await pglite.close();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
} else {
  const [dir, migrationsDir] = args;
  if (!dir || !migrationsDir) throw new Error('usage: pgliteTemplateChild <data directory> <migrations directory>');
  const db = pgliteDb(await createPglite(dir));
  await migrate(db, migrationsDir);
  await db.close();
}
