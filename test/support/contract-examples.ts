import type { ValidateFunction } from 'ajv/dist/2020.js';
import { API_NAMES, resolve, type ApiName, type JsonObject } from '../../src/contract/documents.js';
import { operation as contractOperation, schemaValidator } from '../../src/contract/operations.js';
import { loadLosslessDocument } from '../../src/contract/losslessDocument.js';
import { documentedOperations } from '../../scripts/mock/contract-document.js';

export interface ContractExample {
  /** Readable test name, e.g. "platform createOrderPayment request body example full". */
  name: string;
  api: ApiName;
  value: unknown;
  validate: ValidateFunction;
  /** The components/examples entry it comes from, when it is a $ref. */
  component?: string;
}

/**
 * Every example in the three bundled documents (read losslessly), paired with the validator of
 * the schema it illustrates: request body examples, response examples per status, parameter
 * examples, and `examples` of component schemas and of their nested property schemas.
 */
export function contractExamples(): ContractExample[] {
  return API_NAMES.flatMap((api) => [...operationExamples(api), ...schemaExamples(api)]);
}

function operationExamples(api: ApiName): ContractExample[] {
  const document = loadLosslessDocument(api);
  const found: ContractExample[] = [];
  const sections = [
    ...documentedOperations(document).map((documented) => ({ documented, prefix: `${api} ${documented.operationId}` })),
    // Webhooks are the partner operations again (validated with the partner API's compiled schemas).
    ...documentedOperations(document, 'webhooks').map((documented) => ({ documented, prefix: `${api} webhook ${documented.operationId}` })),
  ];
  for (const { documented, prefix } of sections) {
    const contract = contractOperation(documented.operationId);
    const body = documented.node.requestBody ? resolve(document, documented.node.requestBody) : undefined;
    for (const [mediaType, media] of Object.entries((body?.content as JsonObject | undefined) ?? {})) {
      if (!contract.validateBody) throw new Error(`${prefix} has a request body but no compiled validator`);
      found.push(...mediaExamples(api, media as JsonObject, `${prefix} request body (${mediaType})`, contract.validateBody));
    }
    for (const [status, ref] of Object.entries((documented.node.responses as JsonObject | undefined) ?? {})) {
      const response = resolve(document, ref);
      const validate = contract.responses.get(status)?.validate;
      for (const [mediaType, media] of Object.entries((response.content as JsonObject | undefined) ?? {})) {
        if (!validate) throw new Error(`${prefix} ${status} has content but no compiled validator`);
        found.push(...mediaExamples(api, media as JsonObject, `${prefix} response ${status} (${mediaType})`, validate));
      }
    }
    const parameters = [...((documented.pathItem.parameters as unknown[]) ?? []), ...((documented.node.parameters as unknown[]) ?? [])];
    for (const ref of parameters) {
      const parameter = resolve(document, ref);
      const compiled = contract.parameters.find((candidate) => candidate.name === parameter.name && candidate.in === parameter.in);
      if (!compiled) throw new Error(`${prefix} parameter ${String(parameter.name)} was not compiled`);
      found.push(
        ...mediaExamples(api, parameter, `${prefix} parameter ${String(parameter.in)} ${String(parameter.name)}`, compiled.validate),
      );
    }
  }
  return found;
}

/** `example` and `examples` of a media type object or a parameter. */
function mediaExamples(api: ApiName, holder: JsonObject, prefix: string, validate: ValidateFunction): ContractExample[] {
  const document = loadLosslessDocument(api);
  const found: ContractExample[] = [];
  if ('example' in holder) found.push({ name: `${prefix} example`, api, value: holder.example, validate });
  for (const [name, ref] of Object.entries((holder.examples as JsonObject | undefined) ?? {})) {
    const example = resolve(document, ref);
    const $ref = (ref as JsonObject).$ref;
    found.push({
      name: `${prefix} example ${name}`,
      api,
      value: example.value,
      validate,
      component: typeof $ref === 'string' ? $ref.replace('#/components/examples/', '') : undefined,
    });
  }
  return found;
}

function schemaExamples(api: ApiName): ContractExample[] {
  const schemas = loadLosslessDocument(api).components.schemas ?? {};
  const found: ContractExample[] = [];
  const visit = (node: unknown, pointer: string): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const schema = node as JsonObject;
    if (Array.isArray(schema.examples)) {
      const validate = schemaValidator(api, pointer);
      schema.examples.forEach((value, index) => found.push({ name: `${api} schema ${pointer} examples[${index}]`, api, value, validate }));
    }
    for (const [key, child] of Object.entries((schema.properties as JsonObject | undefined) ?? {}))
      visit(child, `${pointer}/properties/${key}`);
    for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
      (schema[keyword] as unknown[] | undefined)?.forEach((child, index) => visit(child, `${pointer}/${keyword}/${index}`));
    }
    for (const keyword of ['items', 'not', 'if', 'then', 'else', 'additionalProperties'] as const)
      visit(schema[keyword], `${pointer}/${keyword}`);
  };
  for (const [name, schema] of Object.entries(schemas)) visit(schema, name);
  return found;
}
