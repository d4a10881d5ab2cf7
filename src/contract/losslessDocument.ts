import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot, resolve, type ApiName, type JsonObject, type OpenApiDocument } from './documents.js';
import { parseLossless } from './json.js';

const cache = new Map<ApiName, OpenApiDocument>();

/**
 * The bundled document read with lossless-json, so its examples keep every digit they were
 * written with: loadDocument's JSON.parse would round long numbers.
 */
export function loadLosslessDocument(api: ApiName): OpenApiDocument {
  let document = cache.get(api);
  if (!document) {
    const text = readFileSync(join(packageRoot(), 'generated', 'openapi', `${api}.json`), 'utf8');
    document = parseLossless(text) as OpenApiDocument;
    cache.set(api, document);
  }
  return document;
}

export interface NamedExample {
  name: string;
  value: unknown;
}

/** The `examples` of a media type object, each `$ref` resolved to its value, in document order. */
export function namedExamples(document: OpenApiDocument, media: JsonObject | undefined): NamedExample[] {
  return Object.entries((media?.examples as JsonObject | undefined) ?? {}).map(([name, example]) => ({
    name,
    value: resolve(document, example).value,
  }));
}
