import type { DecimalRule } from './decimal.js';
import { loadDocument, resolve, type ApiName, type JsonObject } from './documents.js';
import type { JsonPath } from './jsonPath.js';

/** What the contract constrains at one location of a request (all allOf narrowings merged). */
export interface Location {
  path: JsonPath;
  /** The effective limit: the smallest maxLength among every schema that applies. */
  maxLength?: number;
  /** Allowed values when the location is an enum or const (no free text can be valid there). */
  closedTo?: unknown[];
  decimal?: DecimalRule;
  integerMinimum?: number;
  /** The effective largest integer: the smallest `maximum` of an integer schema that applies. */
  integerMaximum?: number;
  /** The effective largest array: the smallest `maxItems` among every schema that applies. */
  maxItems?: number;
  /** Names the schema requires at this location when it is an object. */
  required: string[];
}

/**
 * Every constrained location of a request schema: $refs, `allOf` branches (all apply, so limits
 * narrow) and `then` (a conditional narrowing; whoever builds values from it confirms them
 * against the contract's validator, or starts from an example that satisfies the `if`). Arrays
 * contribute their first element. `anyOf` alternatives are types, not limits, and are not followed.
 */
export function locations(api: ApiName, schema: unknown): Location[] {
  const found = new Map<string, Location>();
  const visit = (node: unknown, path: JsonPath, depth: number): void => {
    if (depth > 40) throw new Error(`schema too deep at ${path.join('.')}`);
    const current = resolve(loadDocument(api), node);
    if (current === null || typeof current !== 'object') return;
    const key = JSON.stringify(path);
    let location = found.get(key);
    if (!location) found.set(key, (location = { path, required: [] }));
    if (typeof current.maxLength === 'number') location.maxLength = Math.min(location.maxLength ?? Infinity, current.maxLength);
    if (Array.isArray(current.enum)) location.closedTo = current.enum;
    if ('const' in current) location.closedTo = [current.const];
    if (current['x-decimal']) location.decimal = current['x-decimal'] as DecimalRule;
    if (current.type === 'integer' && typeof current.minimum === 'number') location.integerMinimum = current.minimum;
    if (current.type === 'integer' && typeof current.maximum === 'number')
      location.integerMaximum = Math.min(location.integerMaximum ?? Infinity, current.maximum);
    if (typeof current.maxItems === 'number') location.maxItems = Math.min(location.maxItems ?? Infinity, current.maxItems);
    for (const name of (current.required as string[] | undefined) ?? [])
      if (!location.required.includes(name)) location.required.push(name);
    for (const branch of (current.allOf as unknown[] | undefined) ?? []) visit(branch, path, depth + 1);
    if (current.then) visit(current.then, path, depth + 1);
    for (const [name, child] of Object.entries((current.properties as JsonObject | undefined) ?? {}))
      visit(child, [...path, name], depth + 1);
    if (current.items && typeof current.items === 'object') visit(current.items, [...path, 0], depth + 1);
  };
  visit(schema, [], 0);
  return [...found.values()];
}
