import { loadDocument, resolve, type JsonObject, type OpenApiDocument } from '../../contract/documents.js';
import { loadLosslessDocument, namedExamples, type NamedExample } from '../../contract/losslessDocument.js';
import { check, operation, type OperationContract, type ValidationResult } from '../../contract/operations.js';
import { locations, type Location } from '../../contract/schemaLocations.js';

/**
 * A request as the contract describes it: the JSON body of a POST, or the query parameters of a
 * GET seen as one object of strings (the GET variant of E4 carries the POST body's fields there).
 */
export interface RequestShape {
  operation: OperationContract;
  carrier: 'body' | 'query' | 'none';
  /** The documented request examples, read without loss of digits. */
  examples: NamedExample[];
  locations: Location[];
  validate(value: unknown): ValidationResult;
}

export function requestShape(operationId: string): RequestShape {
  const contract = operation(operationId);
  const node = operationNode(loadDocument(contract.api), contract);
  const document = loadDocument(contract.api);
  if (node.requestBody) {
    const media = (resolve(document, node.requestBody).content as JsonObject)['application/json'] as JsonObject;
    const lossless = loadLosslessDocument(contract.api);
    const losslessMedia = (resolve(lossless, operationNode(lossless, contract).requestBody).content as JsonObject)[
      'application/json'
    ] as JsonObject;
    const examples = namedExamples(lossless, losslessMedia);
    const validateBody = contract.validateBody!;
    return {
      operation: contract,
      carrier: 'body',
      examples,
      locations: locations(contract.api, media.schema),
      validate: (value) => check(validateBody, value),
    };
  }
  const query = contract.parameters.filter((parameter) => parameter.in === 'query');
  if (query.length === 0)
    return {
      operation: contract,
      carrier: 'none',
      examples: [{ name: 'request', value: undefined }],
      locations: [],
      validate: () => ({ valid: true }),
    };
  return queryShape(contract, node);
}

/** The query parameters as one object schema, so the same case generation applies to a GET. */
function queryShape(contract: OperationContract, node: JsonObject): RequestShape {
  const document = loadDocument(contract.api);
  const parameters = ((node.parameters as unknown[]) ?? [])
    .map((ref) => resolve(document, ref))
    .filter((parameter) => parameter.in === 'query');
  const schema = {
    type: 'object',
    required: parameters.filter((parameter) => parameter.required).map((parameter) => String(parameter.name)),
    properties: Object.fromEntries(parameters.map((parameter) => [String(parameter.name), parameter.schema])),
  };
  const example = Object.fromEntries(
    parameters.map((parameter) => {
      const schemaNode = resolve(document, parameter.schema);
      return [String(parameter.name), parameter.example ?? (schemaNode.examples as unknown[] | undefined)?.[0]];
    }),
  );
  const compiled = contract.parameters.filter((parameter) => parameter.in === 'query');
  return {
    operation: contract,
    carrier: 'query',
    examples: [{ name: 'query', value: example }],
    locations: locations(contract.api, schema),
    validate(value) {
      const fields = (value ?? {}) as Record<string, unknown>;
      for (const parameter of compiled) {
        if (!(parameter.name in fields)) {
          if (parameter.required) return { valid: false, message: `${parameter.name} is required`, errors: [] };
          continue;
        }
        const result = check(parameter.validate, fields[parameter.name]);
        if (!result.valid) return { valid: false, message: `${parameter.name}: ${result.message}`, errors: result.errors };
      }
      return { valid: true };
    },
  };
}

function operationNode(document: OpenApiDocument, contract: OperationContract): JsonObject {
  return (document.paths[contract.path] as JsonObject)[contract.method.toLowerCase()] as JsonObject;
}
