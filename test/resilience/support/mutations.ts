import type { ApiName } from '../../../src/contract/documents.js';
import { LosslessNumber } from '../../../src/contract/json.js';
import { dotted, getAt, withoutAt, withValueAt, type JsonPath } from '../../../src/contract/jsonPath.js';
import { effective, type Effective } from './contractSchema.js';

/** An invalid variant of a valid body: what was broken, and how to make the body (on demand: copies are not free). */
export interface Mutation {
  label: string;
  body: () => unknown;
}

/**
 * Every invalid variant of `value` the schema defines, at every location `value` has: each
 * required property removed, each value given a wrong JSON type, and each limit pushed one step
 * past (maxLength + 1, minLength - 1, an enum value that is not listed, a forbidden const, an
 * integer below its minimum, a decimal with one digit or one decimal place too many, or just
 * outside its range), and a NUL character in a string (the platform's conventions refuse it).
 */
export function mutationsOf(api: ApiName, schema: unknown, value: unknown): Mutation[] {
  const found: Mutation[] = [];
  walk(api, [schema], value, [], found);
  return found;
}

function walk(api: ApiName, nodes: readonly unknown[], root: unknown, path: JsonPath, found: Mutation[]): void {
  const here = getAt(root, path);
  const schema = effective(api, nodes, here);
  const at = dotted(path) || 'the body';
  const replace = (label: string, replacement: unknown) =>
    found.push({ label: `${at}: ${label}`, body: () => (path.length === 0 ? replacement : withValueAt(root, path, replacement)) });

  if (path.length > 0) replace('wrong type', wrongType(schema, here));
  if (schema.decimal) {
    for (const [label, text] of decimalBreakers(schema.decimal)) {
      replace(`${label} (string)`, text);
      replace(`${label} (number)`, new LosslessNumber(text));
    }
    return;
  }
  if (typeof here === 'string') {
    if (schema.maxLength !== undefined && !schema.enum) replace(`longer than ${schema.maxLength}`, 'a'.repeat(schema.maxLength + 1));
    if (schema.minLength !== undefined && schema.minLength > 0)
      replace(`shorter than ${schema.minLength}`, 'a'.repeat(schema.minLength - 1));
    if (schema.enum) replace('not in the enum', `${String(schema.enum[0])}_not_listed`);
    for (const forbidden of schema.notConst) replace(`forbidden value ${String(forbidden)}`, forbidden);
    if (!schema.enum) replace('holds U+0000', `${here.slice(0, 1)}\u0000`);
  }
  if (typeof here === 'number' || here instanceof LosslessNumber) {
    if (schema.minimum !== undefined) replace(`below the minimum ${schema.minimum}`, schema.minimum - 1);
  }
  if (Array.isArray(here) && here.length > 0) walk(api, schema.items, root, [...path, 0], found);
  if (here !== null && typeof here === 'object' && !Array.isArray(here) && !(here instanceof LosslessNumber)) {
    for (const key of schema.required) {
      if (key in here) {
        found.push({ label: `${dotted([...path, key])}: required, removed`, body: () => withoutAt(root, [...path, key]) });
      }
    }
    for (const [key, childNodes] of schema.properties) {
      if (key in here) walk(api, childNodes, root, [...path, key], found);
    }
  }
}

function wrongType(schema: Effective, value: unknown): unknown {
  if (schema.decimal) return true;
  if (schema.open || schema.properties.size > 0) return ['not', 'an', 'object'];
  if (Array.isArray(value)) return { not: 'an array' };
  if (typeof value === 'string') return new LosslessNumber('12345');
  if (typeof value === 'boolean') return 'true';
  return 'not a number';
}

function decimalBreakers(rule: NonNullable<Effective['decimal']>): Array<[string, string]> {
  const breakers: Array<[string, string]> = [
    [`${rule.precision + 1} digits`, `1${'0'.repeat(rule.precision)}`],
    [`${rule.scale + 1} decimal places`, `1.${'1'.repeat(rule.scale + 1)}`],
    ['an exponent', '1e2'],
  ];
  const step = `0.${'0'.repeat(Math.max(rule.scale - 1, 0))}1`;
  if (rule.minimum !== undefined) breakers.push([`below ${rule.minimum}`, subtract(rule.minimum, step)]);
  if (rule.maximum !== undefined) breakers.push([`above ${rule.maximum}`, `${rule.maximum}.${'0'.repeat(Math.max(rule.scale - 1, 0))}1`]);
  return breakers;
}

/** `minimum - step` for the small decimal texts of x-decimal minimums ("0", "-90", "-180"). */
function subtract(minimum: string, step: string): string {
  return minimum.startsWith('-') ? `${minimum}${step.slice(1)}` : `-${step}`;
}
