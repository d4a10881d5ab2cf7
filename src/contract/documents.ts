import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The three APIs of the contract, as bundled into generated/openapi/<name>.json. */
export const API_NAMES = ['platform', 'hostapp', 'miniapp'] as const;
export type ApiName = (typeof API_NAMES)[number];

// The bundled documents are plain JSON; this is the little of their shape the code walks.
export type JsonObject = { [key: string]: unknown };
export interface OpenApiDocument extends JsonObject {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, JsonObject>>;
}

/** The folder holding package.json, found from this module whether it runs from src/ or dist/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'openapi'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the minibridge package root');
    dir = parent;
  }
  return dir;
}

const cache = new Map<ApiName, OpenApiDocument>();

/** The bundled document of an API (generated/openapi/<name>.json). */
export function loadDocument(name: ApiName): OpenApiDocument {
  let document = cache.get(name);
  if (!document) {
    const file = join(packageRoot(), 'generated', 'openapi', `${name}.json`);
    document = JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
    cache.set(name, document);
  }
  return document;
}

/** Follows a local `$ref` (`#/components/...`) until a non-reference object is reached. */
export function resolve<T = JsonObject>(document: OpenApiDocument, node: unknown): T {
  let current = node as JsonObject;
  const seen = new Set<string>();
  while (current && typeof current.$ref === 'string') {
    const ref = current.$ref;
    if (seen.has(ref)) throw new Error(`circular $ref ${ref}`);
    seen.add(ref);
    current = pointer(document, ref) as JsonObject;
  }
  return current as T;
}

function pointer(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, part) => {
      if (node === null || typeof node !== 'object' || !(part in node)) throw new Error(`unresolvable $ref ${ref}`);
      return (node as JsonObject)[part];
    }, document);
}
