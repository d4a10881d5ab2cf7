import { loadDocument, resolve, type ApiName, type JsonObject } from '../../../src/contract/documents.js';

/**
 * Everything that applies at one location of a request body, merged from the schema reached
 * there: `$ref`s followed, `allOf` branches combined (limits narrow: the smallest maxLength wins,
 * required lists join), and a `then` branch added when its `if` holds for the value at hand.
 */
export interface Effective {
  types: string[];
  properties: Map<string, unknown[]>;
  required: Set<string>;
  maxLength?: number;
  minLength?: number;
  enum?: unknown[];
  notConst: unknown[];
  items: unknown[];
  anyOf?: unknown[];
  decimal?: { precision: number; scale: number; minimum?: string; maximum?: string };
  pattern?: string;
  minimum?: number;
  /** An object that admits any property (custom_attributes, payload). */
  open: boolean;
  conditional?: { property: string; value: unknown; then: unknown };
}

export function effective(api: ApiName, nodes: readonly unknown[], value?: unknown): Effective {
  const document = loadDocument(api);
  const result: Effective = { types: [], properties: new Map(), required: new Set(), notConst: [], items: [], open: false };
  const visit = (node: unknown) => {
    const schema = resolve<JsonObject>(document, node);
    if (!schema || typeof schema !== 'object') return;
    if (typeof schema.type === 'string' && !result.types.includes(schema.type)) result.types.push(schema.type);
    for (const [key, child] of Object.entries((schema.properties as JsonObject | undefined) ?? {})) {
      result.properties.set(key, [...(result.properties.get(key) ?? []), child]);
    }
    for (const key of (schema.required as string[] | undefined) ?? []) result.required.add(key);
    if (typeof schema.maxLength === 'number') result.maxLength = Math.min(result.maxLength ?? Infinity, schema.maxLength);
    if (typeof schema.minLength === 'number') result.minLength = Math.max(result.minLength ?? 0, schema.minLength);
    if (Array.isArray(schema.enum)) result.enum = schema.enum;
    if (schema.not && typeof schema.not === 'object' && 'const' in (schema.not as JsonObject))
      result.notConst.push((schema.not as JsonObject).const);
    if (schema.items) result.items.push(schema.items);
    if (Array.isArray(schema.anyOf)) result.anyOf = schema.anyOf;
    if (schema['x-decimal']) result.decimal = schema['x-decimal'] as Effective['decimal'];
    if (typeof schema.pattern === 'string') result.pattern = schema.pattern;
    if (typeof schema.minimum === 'number') result.minimum = schema.minimum;
    if (schema.additionalProperties === true) result.open = true;
    if (schema.if && schema.then) {
      const condition = resolve<JsonObject>(document, schema.if);
      const [property, rule] = Object.entries((condition.properties as JsonObject) ?? {})[0] ?? [];
      if (property && rule && typeof rule === 'object' && 'const' in rule) {
        result.conditional = { property, value: (rule as JsonObject).const, then: schema.then };
        const current = value !== null && typeof value === 'object' ? (value as JsonObject)[property] : undefined;
        if (current === result.conditional.value) visit(schema.then);
      }
    }
    for (const part of (schema.allOf as unknown[] | undefined) ?? []) visit(part);
  };
  nodes.forEach(visit);
  return result;
}
