import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { SchemaValidateFunction } from 'ajv/dist/types/index.js';
import addFormatsModule from 'ajv-formats';
import { decimalViolation, type DecimalRule } from './decimal.js';
import type { JsonObject, OpenApiDocument } from './documents.js';
import { numberSource } from './json.js';

/**
 * An ajv (JSON Schema 2020-12) instance for the contract's schemas: strict, with every `x-*`
 * extension the documents use registered as an annotation, except `x-decimal`, which validates
 * digit counts and ranges on the exact text the sender wrote.
 */
export function createAjv(documents: OpenApiDocument[]): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-decimal', schemaType: 'object', errors: true, validate: validateDecimal });
  const annotations = new Set<string>(['example']);
  for (const document of documents) collectExtensions(document.components?.schemas, annotations);
  annotations.delete('x-decimal');
  for (const keyword of annotations) ajv.addKeyword({ keyword, schemaType: ['string', 'object', 'array', 'boolean', 'number'] });
  return ajv;
}

// ajv-formats is CommonJS; its default export arrives as the module object under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const validateDecimal: SchemaValidateFunction = function validateDecimal(rule: DecimalRule, data: unknown, _parentSchema, dataCxt): boolean {
  let text: string;
  if (typeof data === 'string') text = data;
  else if (typeof data === 'number') text = numberSource(dataCxt?.parentData, dataCxt?.parentDataProperty, data);
  else return true; // type mismatches are reported by `type`
  const violation = decimalViolation(text, rule);
  if (violation === undefined) return true;
  (validateDecimal as { errors?: Partial<ErrorObject>[] }).errors = [{ keyword: 'x-decimal', message: violation, params: { rule } }];
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
