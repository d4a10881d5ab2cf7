import { loadDocument, resolve, type JsonObject } from '../../contract/documents.js';
import type { OperationContract } from '../../contract/operations.js';

/** The error codes a partner operation answers (with HTTP 200) when the pipeline, not the handler, decides. */
export interface PipelineErrorCodes {
  /** Authentication failed (missing or wrong Authorization, bad or replayed signature). */
  unauthorized: string;
  /** The request breaks the API: E3 says INVALID_ORDER_DATA, E7 INVALID_EVENT_DATA, others INVALID_REQUEST. */
  invalidRequest: string;
  /** The handler failed or answered something that breaks the API. */
  unknownError: string;
}

/**
 * Reads the codes from the contract: the operation's `unauthorized` and `invalidRequest` 200
 * examples, and UNKNOWN_ERROR from the platform's error catalogue, so the helpers can never
 * drift from what the docs promise.
 */
export function pipelineErrorCodes(op: OperationContract): PipelineErrorCodes {
  return {
    unauthorized: exampleErrorCode(op, 'unauthorized'),
    invalidRequest: exampleErrorCode(op, 'invalidRequest'),
    unknownError: catalogueCode('UNKNOWN_ERROR'),
  };
}

function exampleErrorCode(op: OperationContract, exampleName: string): string {
  const document = loadDocument(op.api);
  const operationObject = document.paths[op.path]?.[op.method.toLowerCase()] as JsonObject | undefined;
  const response = operationObject && resolve(document, (operationObject.responses as JsonObject)['200']);
  const media = (response?.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined;
  const example = (media?.examples as JsonObject | undefined)?.[exampleName];
  const code = example && (resolve(document, example).value as JsonObject | undefined)?.error_code;
  if (typeof code !== 'string') throw new Error(`the contract's ${op.operationId} has no "${exampleName}" 200 example with an error_code`);
  return code;
}

function catalogueCode(code: string): string {
  const document = loadDocument('platform');
  const catalogue = resolve(document, document.components.schemas?.ErrorCode);
  if (!(catalogue.enum as unknown[] | undefined)?.includes(code)) throw new Error(`the contract's error catalogue has no ${code}`);
  return code;
}
