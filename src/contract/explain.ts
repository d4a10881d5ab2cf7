import type { ErrorObject } from 'ajv/dist/2020.js';
import { INTEGER_KEYWORD, INTEGER_TEXT_MESSAGE } from './ajv.js';

/**
 * Validation errors as one sentence for the partner who sent the value: it names the field (as
 * `order.items[0].price`) and says what the contract expects, in words made from the schema
 * keyword that failed and its parameters. ajv's own text ("must NOT be valid", "must match
 * pattern ...") never reaches a partner. Works with or without ajv's `verbose` errors (the
 * standalone registry validator has none); with them, `not` can say which value is refused.
 */
export function explain(errors: ErrorObject[]): string {
  if (errors.length === 0) return 'the value does not match the contract';
  const deepest = errors.reduce((most, error) => Math.max(most, depth(error)), 0);
  const candidates = errors.filter((error) => depth(error) === deepest && !COMBINATORS.has(error.keyword));
  const pool = candidates.length > 0 ? candidates : errors;
  // x-decimal speaks in the spec's terms (digits), where pattern and maximum would not.
  const preferred =
    pool.find((error) => error.keyword === 'x-decimal' || error.keyword === 'x-integer-text') ??
    pool.find((error) => error.keyword !== 'type') ??
    pool[0]!;
  const where = location(preferred);
  if (preferred.keyword === 'type') {
    // A number too large for a float where the contract says integer (1e400) fails `type` before
    // the check of its digits can say what is wrong with it: said as that check says it.
    if (preferred.params.type === 'integer' && (preferred.parentSchema as Record<string, unknown> | undefined)?.[INTEGER_KEYWORD] === true)
      return `${where || 'the body'} ${INTEGER_TEXT_MESSAGE}`;
    const types = [...new Set(pool.filter((error) => error.keyword === 'type').flatMap((error) => String(error.params.type).split(',')))];
    return `${where || 'the body'} must be ${orList(types.map(typeName))}`;
  }
  return sentence(preferred, where);
}

/** Keywords whose failure only says that a branch below failed: the branch's own error says why. */
const COMBINATORS = new Set(['anyOf', 'oneOf', 'allOf', 'if']);

function sentence(error: ErrorObject, where: string): string {
  const subject = where || 'the body';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${join(where, String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${join(where, String(params.additionalProperty))} is not allowed: the contract defines no such field here`;
    case 'dependentRequired':
      return `${join(where, String(params.missingProperty))} is required when ${join(where, String(params.property))} is given`;
    case 'enum':
      return `${subject} must be one of ${list(params.allowedValues as unknown[])}`;
    case 'const':
      return `${subject} must be ${show(params.allowedValue)}`;
    case 'not':
      return `${subject} ${refused(error.schema)}`;
    case 'x-decimal':
    case 'x-integer-text':
      return `${subject} ${error.message}`;
    case 'maxLength':
      return `${subject} must be at most ${params.limit} characters long`;
    case 'minLength':
      return Number(params.limit) === 1 ? `${subject} must not be empty` : `${subject} must be at least ${params.limit} characters long`;
    case 'pattern':
      return `${subject} has characters or a form the contract does not allow here (it must match ${String(params.pattern)})`;
    case 'format':
      return `${subject} must be ${FORMATS[String(params.format)] ?? `a valid ${String(params.format)}`}`;
    case 'minimum':
      return `${subject} must be at least ${params.limit}`;
    case 'maximum':
      return `${subject} must be at most ${params.limit}`;
    case 'exclusiveMinimum':
      return `${subject} must be greater than ${params.limit}`;
    case 'exclusiveMaximum':
      return `${subject} must be less than ${params.limit}`;
    case 'multipleOf':
      return `${subject} must be a multiple of ${params.multipleOf}`;
    case 'minItems':
      return `${subject} must have at least ${params.limit} ${Number(params.limit) === 1 ? 'entry' : 'entries'}`;
    case 'maxItems':
      return `${subject} must have at most ${params.limit} entries`;
    case 'uniqueItems':
      return `${subject} must not list the same entry twice (entries ${params.j} and ${params.i} are equal)`;
    case 'minProperties':
      return `${subject} must have at least ${params.limit} fields`;
    case 'maxProperties':
      return `${subject} must have at most ${params.limit} fields`;
    case 'propertyNames':
      return `${subject} has a field name the contract does not allow (${String(params.propertyName)})`;
    case 'anyOf':
    case 'oneOf':
      return `${subject} does not match any of the forms the contract allows here`;
    default:
      return `${subject} breaks the contract's "${error.keyword}" rule here`;
  }
}

const FORMATS: Record<string, string> = {
  'date-time': 'an RFC 3339 date and time with a time zone, e.g. 2026-11-21T10:15:30Z',
  date: 'an RFC 3339 date, e.g. 2026-11-21',
  uuid: 'a UUID, e.g. 3f2b6c1e-8a4d-4f3b-9c2e-5d1a7b9e0f12',
  uri: 'an absolute URI',
  email: 'an e-mail address',
};

/** What a `not` schema refuses, in words; the schema is only there with ajv's `verbose` option. */
function refused(schema: unknown): string {
  if (schema !== null && typeof schema === 'object') {
    const not = schema as { const?: unknown; enum?: unknown[] };
    if (Object.hasOwn(not, 'const')) return `must not be ${show(not.const)} here`;
    if (Array.isArray(not.enum)) return `must not be any of ${list(not.enum)} here`;
  }
  return 'has a value the contract does not allow here';
}

function typeName(type: string): string {
  const names: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    integer: 'a whole number',
    boolean: 'true or false',
    object: 'a JSON object',
    array: 'a JSON array',
    null: 'null',
  };
  return names[type] ?? `of type ${type}`;
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function list(values: unknown[]): string {
  return values.map(show).join(', ');
}

function orList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function depth(error: ErrorObject): number {
  const base = error.instancePath.split('/').length;
  return error.keyword === 'required' || error.keyword === 'additionalProperties' ? base + 1 : base;
}

function location(error: ErrorObject): string {
  return error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : join(path, part)), '');
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
