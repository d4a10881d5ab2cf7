/**
 * Makes a PGlite template cluster (ADR 0021, ADR 0026): initdb, then the store's migrations, in a
 * process of its own that exits when done, so the serving process never holds initdb's memory.
 * Arguments: the directory to make (it must not hold a cluster) and the migrations directory.
 */
import { createPglite, pgliteDb } from './db.js';
import { migrate } from './migrate.js';

const [dir, migrationsDir] = process.argv.slice(2);
if (!dir || !migrationsDir) throw new Error('usage: pgliteTemplateChild <data directory> <migrations directory>');
const db = pgliteDb(await createPglite(dir));
await migrate(db, migrationsDir);
await db.close();
