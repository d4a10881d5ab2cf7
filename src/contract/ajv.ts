import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { SchemaValidateFunction } from 'ajv/dist/types/index.js';
import addFormatsModule from 'ajv-formats';
import { decimalViolation, INTEGER_TEXT, type DecimalRule } from './decimal.js';
import type { JsonObject, OpenApiDocument } from './documents.js';
import { numberSource } from './json.js';

/**
 * An ajv (JSON Schema 2020-12) instance for the contract's schemas: strict, with every `x-*`
 * extension the documents use registered as an annotation, except `x-decimal`, which validates
 * digit counts and ranges on the exact text the sender wrote.
 */
export function createAjv(documents: OpenApiDocument[]): Ajv2020 {
  // ownProperties: `required` and the property loops look at own members only, never at what a
  // plain object inherits (ADR 0015). verbose: errors carry their schema, so a refusal message
  // can say which value a `not` rule refuses (explain.ts).
  const ajv = new Ajv2020({
    strict: true,
    strictRequired: false,
    // The first failure only: with every failure collected, a body's long array of bad items
    // (each item failing, past its maxItems) took time growing faster than its length (a 600 KB
    // E1 body held a core for minutes, before authentication: ADR 0015).
    allErrors: false,
    allowUnionTypes: true,
    ownProperties: true,
    verbose: true,
    // Compiling a schema does not first check it against the 2020-12 meta-schema: that check
    // compiles the meta-schema itself (~100 ms, ADR 0026), which lazily compiled validators then
    // paid on a partner's first request (the first E6 answer held every slot). The contract's
    // schemas are checked once by the suite instead (contractSchemaProblems, schemaValidity.test).
    validateSchema: false,
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-decimal', schemaType: 'object', errors: true, validate: validateDecimal });
  ajv.addKeyword({ keyword: INTEGER_KEYWORD, schemaType: 'boolean', errors: true, validate: validateIntegerText });
  const annotations = new Set<string>(['example']);
  for (const document of documents) collectExtensions(document.components?.schemas, annotations);
  annotations.delete('x-decimal');
  for (const keyword of annotations) ajv.addKeyword({ keyword, schemaType: ['string', 'object', 'array', 'boolean', 'number'] });
  return ajv;
}

// ajv-formats is CommonJS; its default export arrives as the module object under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const validateDecimal: SchemaValidateFunction = function validateDecimal(
  rule: DecimalRule,
  data: unknown,
  _parentSchema,
  dataCxt,
): boolean {
  let text: string;
  if (typeof data === 'string') text = data;
  else if (typeof data === 'number') text = numberSource(dataCxt?.parentData, dataCxt?.parentDataProperty, data);
  else return true; // type mismatches are reported by `type`
  const violation = decimalViolation(text, rule);
  if (violation === undefined) return true;
  (validateDecimal as { errors?: Partial<ErrorObject>[] }).errors = [{ keyword: 'x-decimal', message: violation, params: { rule } }];
  return false;
};

/**
 * Added by the compiler beside every `type: integer` of the contract (operations.ts): JSON Schema
 * counts `1.0`, `1E2` and `1e400` as numbers that may be integers once read as floats, but a
 * partner's integer parser may not, so the platform takes an integer only as the digits it
 * would forward (ADR 0015).
 */
export const INTEGER_KEYWORD = 'x-integer-text';
/** Why a number where the contract says integer is refused, whichever check refuses it first. */
export const INTEGER_TEXT_MESSAGE = 'must be a whole number written in digits only (no point, no exponent)';

const validateIntegerText: SchemaValidateFunction = function validateIntegerText(
  _rule: boolean,
  data: unknown,
  _parentSchema,
  dataCxt,
): boolean {
  if (typeof data !== 'number') return true;
  const text = numberSource(dataCxt?.parentData, dataCxt?.parentDataProperty, data);
  if (INTEGER_TEXT.test(text)) return true;
  (validateIntegerText as { errors?: Partial<ErrorObject>[] }).errors = [
    { keyword: INTEGER_KEYWORD, message: INTEGER_TEXT_MESSAGE, params: {} },
  ];
  return false;
};

function collectExtensions(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectExtensions(item, into);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node as JsonObject)) {
      if (key.startsWith('x-')) into.add(key);
      else collectExtensions(value, into);
    }
  }
}
