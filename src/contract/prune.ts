import { loadDocument, resolve, type ApiName, type JsonObject, type OpenApiDocument } from './documents.js';
import { isJsonObject, setOwn } from './json.js';

/**
 * A copy of `value` holding only what the named schema describes: properties it does not list
 * are dropped (recursively through objects, arrays and allOf), values it leaves open (a
 * `custom_attributes` object, a Decimal) are kept as they are. Used to forward to a partner only
 * the fields its API defines, so unknown input is never passed on. Only own members count, on
 * both sides: a member named `constructor` or `toString` is unknown like any other (ADR 0015).
 */
export function pruneToSchema(api: ApiName, schemaName: string, value: unknown): unknown {
  const document = loadDocument(api);
  return prune(document, document.components.schemas[schemaName], value);
}

function prune(document: OpenApiDocument, schemaNode: unknown, value: unknown): unknown {
  const schema = resolve(document, schemaNode);
  if (Array.isArray(value)) {
    const items = itemsOf(document, schema);
    return items ? value.map((item) => prune(document, items, item)) : value;
  }
  if (!isJsonObject(value)) return value;
  const properties = propertiesOf(document, schema);
  if (!properties) return value;
  const copy: JsonObject = {};
  // Object.keys, not Object.entries: no [key, value] pair allocated per member of every request.
  for (const key of Object.keys(value)) {
    if (properties.has(key)) setOwn(copy, key, prune(document, properties.get(key), value[key]));
  }
  return copy;
}

// The documents are loaded once and never change, so what a schema node lists is worked out once
// per node, not on every request.
const propertiesCache = new WeakMap<JsonObject, Map<string, unknown> | undefined>();

/**
 * Properties an object schema lists, merged over allOf; undefined when it leaves objects open.
 * A Map, not an object: looking up a sent key must never find Object.prototype's members.
 */
function propertiesOf(document: OpenApiDocument, schema: JsonObject): Map<string, unknown> | undefined {
  if (propertiesCache.has(schema)) return propertiesCache.get(schema);
  const properties = mergedProperties(document, schema);
  propertiesCache.set(schema, properties);
  return properties;
}

function mergedProperties(document: OpenApiDocument, schema: JsonObject): Map<string, unknown> | undefined {
  const merged = new Map<string, unknown[]>();
  let closed = false;
  const visit = (node: unknown) => {
    const resolved = resolve(document, node);
    if (resolved.additionalProperties === true) return;
    for (const [key, propertySchema] of Object.entries((resolved.properties as JsonObject) ?? {})) {
      closed = true;
      merged.set(key, [...(merged.get(key) ?? []), propertySchema]);
    }
    for (const part of (resolved.allOf as unknown[]) ?? []) visit(part);
  };
  visit(schema);
  if (!closed) return undefined;
  // A property narrowed in several allOf branches: prune by the branch that describes most.
  return new Map([...merged].map(([key, schemas]) => [key, mostDescriptive(document, schemas)]));
}

function mostDescriptive(document: OpenApiDocument, schemas: unknown[]): unknown {
  return (
    schemas.find((node) => {
      const resolved = resolve(document, node);
      return resolved.properties || resolved.items || resolved.allOf || resolved.$ref;
    }) ?? schemas[0]
  );
}

function itemsOf(document: OpenApiDocument, schema: JsonObject): unknown {
  if (schema.items) return schema.items;
  for (const part of (schema.allOf as unknown[]) ?? []) {
    const found = itemsOf(document, resolve(document, part));
    if (found) return found;
  }
  return undefined;
}
