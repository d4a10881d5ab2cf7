/** The store's migration files (apart from the runner, so the PGlite template can name itself by them without the database code). */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const defaultMigrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

const migrationFileName = /^(\d{3})_[a-z0-9_]+\.sql$/;

export interface Migration {
  version: string;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = defaultMigrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.sql')).sort();
  return Promise.all(
    files.map(async (file) => {
      const match = migrationFileName.exec(file);
      if (!match) throw new Error(`Migration file name must look like 001_name.sql: ${file}`);
      return { version: match[1]!, name: file, sql: await readFile(path.join(dir, file), 'utf8') };
    }),
  );
}
