import { resolve, type JsonObject, type OpenApiDocument } from '../../src/contract/documents.js';
import { namedExamples, type NamedExample } from '../../src/contract/losslessDocument.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface DocumentedOperation {
  operationId: string;
  method: string;
  path: string;
  node: JsonObject;
  pathItem: JsonObject;
}

/**
 * The operations under `paths` (what the API serves), or under `webhooks` (the platform document
 * lists there the partner operations it calls, the same path items as the partner documents).
 */
export function documentedOperations(document: OpenApiDocument, section: 'paths' | 'webhooks' = 'paths'): DocumentedOperation[] {
  const found: DocumentedOperation[] = [];
  for (const [path, pathItem] of Object.entries((document[section] as OpenApiDocument['paths'] | undefined) ?? {})) {
    for (const method of METHODS) {
      const node = pathItem[method] as JsonObject | undefined;
      if (node)
        found.push({ operationId: String(node.operationId), method: method.toUpperCase(), path, node, pathItem: pathItem as JsonObject });
    }
  }
  return found;
}

export interface DocumentedResponse {
  status: number;
  contentType?: string;
  examples: NamedExample[];
  /** Header name → example value, for the headers the response documents with an example. */
  headers: Record<string, string>;
}

/** A documented response of an operation with its examples resolved, in document order. */
export function documentedResponse(
  document: OpenApiDocument,
  operation: DocumentedOperation,
  status: string,
): DocumentedResponse | undefined {
  const ref = (operation.node.responses as JsonObject | undefined)?.[status];
  if (ref === undefined) return undefined;
  const response = resolve(document, ref);
  const [contentType, media] = (Object.entries((response.content as JsonObject | undefined) ?? {})[0] ?? []) as [
    string | undefined,
    JsonObject | undefined,
  ];
  const examples = namedExamples(document, media);
  if (examples.length === 0 && media && 'example' in media) examples.push({ name: 'example', value: media.example });
  const headers: Record<string, string> = {};
  for (const [name, headerRef] of Object.entries((response.headers as JsonObject | undefined) ?? {})) {
    const header = resolve(document, headerRef);
    const example = header.example ?? (header.schema as JsonObject | undefined)?.example;
    if (example !== undefined) headers[name] = String(example);
  }
  return { status: Number(status), contentType, examples, headers };
}

/** The operation's documented statuses, in document order. */
export function documentedStatuses(operation: DocumentedOperation): string[] {
  return Object.keys((operation.node.responses as JsonObject | undefined) ?? {});
}
