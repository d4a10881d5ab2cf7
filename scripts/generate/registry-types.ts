import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../lib/paths.js';
import { runOpenapiTypescript, typesPath } from './typescript-types.js';

/** The partner registry's JSON Schema (not an API, so redocly.yaml does not list it). */
export const registrySchemaPath = path.join(repoRoot, 'openapi', 'registry.schema.yaml');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function moveRefs(value: Json): Json {
  if (Array.isArray(value)) return value.map(moveRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string' ? item.replace(/^#\/\$defs\//, '#/components/schemas/') : moveRefs(item),
    ]),
  );
}

/**
 * generated/types/registry.ts: the registry schema as `components["schemas"]`, the root named
 * after its `title` and each `$defs` entry under its own name, so code uses the same
 * `components["schemas"]["X"]` form as for the APIs.
 */
export async function generateRegistryTypes(outRoot: string): Promise<void> {
  const schema = parse(await readFile(registrySchemaPath, 'utf8')) as { [key: string]: Json } & {
    title?: string;
    $defs?: Record<string, Json>;
  };
  const { $defs = {}, $schema: _dialect, $id: _id, ...root } = schema;
  if (typeof root.title !== 'string') throw new Error(`${registrySchemaPath}: the root schema needs a title`);
  const document = {
    openapi: '3.1.0',
    info: { title: root.title, version: '1.0.0' },
    paths: {},
    components: { schemas: moveRefs({ [root.title]: root, ...$defs }) },
  };
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'minibridge-registry-'));
  try {
    const input = path.join(workDir, 'registry.openapi.json');
    await writeFile(input, JSON.stringify(document, null, 2));
    // As for the APIs, a property with a default is non-optional: the types describe the registry
    // as loadRegistry returns it, validated with the defaults filled in.
    await runOpenapiTypescript([{ input, output: typesPath(outRoot, 'registry') }]);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
