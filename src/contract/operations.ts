import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { createAjv, INTEGER_KEYWORD } from './ajv.js';
import { API_NAMES, loadDocument, resolve, type ApiName, type JsonObject, type OpenApiDocument } from './documents.js';
import { explain } from './explain.js';
import { validationView } from './json.js';

export { explain };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface ParameterContract {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie';
  required: boolean;
  validate: ValidateFunction;
}

export interface ResponseContract {
  status: string;
  contentType?: string;
  validate?: ValidateFunction;
}

/** Everything the contract says about one operation, compiled once. */
export interface OperationContract {
  api: ApiName;
  operationId: string;
  method: string;
  /** OpenAPI path template, e.g. /api/v1/admin/deliveries/{delivery_id} */
  path: string;
  validateBody?: ValidateFunction;
  parameters: ParameterContract[];
  responses: Map<string, ResponseContract>;
  /** HTTP status of each error code, read from the error examples the operation documents. */
  errorStatus: Map<string, number>;
  security: Array<Record<string, string[]>>;
  /** How long the platform waits for a partner operation (`x-timeout-ms`), in ms. */
  timeoutMs: number | undefined;
  /** The contract's extensions on the operation (`x-*`), e.g. `x-retry-schedule` on E6. */
  extensions: JsonObject;
}

export type ValidationResult = { valid: true } | { valid: false; message: string; errors: ErrorObject[] };

let shared: { ajv: Ajv2020; operations: Map<string, OperationContract> } | undefined;

/** All operations of the three APIs, by operationId (unique across the APIs). */
export function contractOperations(): Map<string, OperationContract> {
  shared ??= compileAll();
  return shared.operations;
}

export function operation(operationId: string): OperationContract {
  const found = contractOperations().get(operationId);
  if (!found) throw new Error(`the contract has no operation ${operationId}`);
  return found;
}

/** A validator for a named component schema, e.g. schemaValidator('hostapp', 'HostappOrderItem'). */
export function schemaValidator(api: ApiName, name: string): ValidateFunction {
  contractOperations();
  const validate = shared!.ajv.getSchema(`${schemaBase(api)}#/$defs/${name}`);
  if (!validate) throw new Error(`the ${api} API has no schema ${name}`);
  return validate;
}

/** Validates a value parsed with parseLossless (or plain JSON) and explains the first problem. */
export function check(validate: ValidateFunction, value: unknown): ValidationResult {
  if (validate(validationView(value))) return { valid: true };
  const errors = validate.errors ?? [];
  return { valid: false, message: explain(errors), errors };
}

/** The component schemas of one API as the one schema its validators refer to. */
function contractSchemas(api: ApiName, document: OpenApiDocument): JsonObject {
  return { $id: schemaBase(api), $defs: rewriteRefs(document.components.schemas ?? {}, api) } as JsonObject;
}

/** What the JSON Schema 2020-12 meta-schema finds wrong with each API's component schemas (none: []). */
export function contractSchemaProblems(): string[] {
  const documents = API_NAMES.map((api) => [api, loadDocument(api)] as const);
  const ajv = createAjv(documents.map(([, document]) => document));
  return documents.flatMap(([api, document]) =>
    ajv.validateSchema(contractSchemas(api, document)) ? [] : [`${api}: ${ajv.errorsText(ajv.errors)}`],
  );
}

/**
 * The contract's type guard: whether a value parsed with parseLossless (or plain JSON) matches
 * the schema the validator was compiled from, which is the schema its generated type comes from.
 * LosslessNumbers are judged as the numbers they hold, so a member typed `number` may hold one;
 * read numbers with decimalText, never with arithmetic. On false, `validate.errors` says why.
 */
export function conforms<T>(validate: ValidateFunction<T>, value: unknown): value is T {
  return validate(validationView(value));
}

function compileAll(): { ajv: Ajv2020; operations: Map<string, OperationContract> } {
  const documents = API_NAMES.map((api) => [api, loadDocument(api)] as const);
  const ajv = createAjv(documents.map(([, document]) => document));
  for (const [api, document] of documents) {
    // Not checked against the JSON Schema meta-schema here: compiling the 2020-12 meta-schema
    // was the largest part of start-up (ADR 0026). The check runs in the suite instead
    // (contractSchemaProblems), and each validator still compiles in strict mode on first use.
    ajv.addSchema(contractSchemas(api, document), undefined, undefined, false);
  }
  const operations = new Map<string, OperationContract>();
  for (const [api, document] of documents) {
    for (const [path, pathItem] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const op = pathItem[method] as JsonObject | undefined;
        if (!op) continue;
        const compiled = compileOperation(ajv, api, document, path, method, pathItem, op);
        if (operations.has(compiled.operationId)) throw new Error(`duplicate operationId ${compiled.operationId}`);
        operations.set(compiled.operationId, compiled);
      }
    }
  }
  return { ajv, operations };
}

function compileOperation(
  ajv: Ajv2020,
  api: ApiName,
  document: OpenApiDocument,
  path: string,
  method: string,
  pathItem: JsonObject,
  op: JsonObject,
): OperationContract {
  // Validators compile on first use: start-up stays fast and unused operations cost nothing.
  const compile = (schema: unknown): ValidateFunction => {
    let compiled: ValidateFunction | undefined;
    const validate = ((data: unknown) => {
      compiled ??= ajv.compile(rewriteRefs(schema, api) as object);
      const valid = compiled(data);
      validate.errors = compiled.errors;
      return valid;
    }) as ValidateFunction;
    return validate;
  };
  const body = op.requestBody ? resolve(document, op.requestBody) : undefined;
  const bodySchema = (body?.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined;
  const parameters = [...((pathItem.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])].map((ref) => {
    const parameter = resolve(document, ref);
    return {
      name: String(parameter.name),
      in: parameter.in as ParameterContract['in'],
      required: Boolean(parameter.required),
      validate: compile(parameter.schema ?? {}),
    };
  });
  const responses = new Map<string, ResponseContract>();
  const errorStatus = new Map<string, number>();
  for (const [status, ref] of Object.entries((op.responses as JsonObject) ?? {})) {
    const response = resolve(document, ref);
    const content = (response.content as JsonObject | undefined) ?? {};
    const [contentType, media] = (Object.entries(content)[0] ?? []) as [string | undefined, JsonObject | undefined];
    responses.set(status, { status, contentType, validate: media?.schema ? compile(media.schema) : undefined });
    for (const example of Object.values((media?.examples as JsonObject) ?? {})) {
      const code = (resolve(document, example).value as JsonObject | undefined)?.error_code;
      if (typeof code === 'string' && !errorStatus.has(code)) errorStatus.set(code, Number(status));
    }
  }
  return {
    api,
    operationId: String(op.operationId),
    method: method.toUpperCase(),
    path,
    validateBody: bodySchema?.schema ? compile(bodySchema.schema) : undefined,
    parameters,
    responses,
    errorStatus,
    security: (op.security ?? document.security ?? []) as Array<Record<string, string[]>>,
    timeoutMs: typeof op['x-timeout-ms'] === 'number' ? op['x-timeout-ms'] : undefined,
    extensions: Object.fromEntries(Object.entries(op).filter(([key]) => key.startsWith('x-'))),
  };
}

function schemaBase(api: ApiName): string {
  return `https://minibridge.dev/contract/${api}.json`;
}

/**
 * Points `#/components/schemas/X` references at the ajv copy of the components of `api`, and
 * marks every integer schema with the integer-text rule (ajv.ts).
 */
function rewriteRefs(node: unknown, api: ApiName): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, api));
  if (node === null || typeof node !== 'object') return node;
  const copy: JsonObject = {};
  const type = (node as JsonObject).type;
  if (type === 'integer' || (Array.isArray(type) && type.includes('integer'))) copy[INTEGER_KEYWORD] = true;
  for (const [key, value] of Object.entries(node)) {
    copy[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
        ? `${schemaBase(api)}#/$defs/${value.slice('#/components/schemas/'.length)}`
        : rewriteRefs(value, api);
  }
  return copy;
}
