import type { Logger } from 'pino';
import type { operations as HostappOperations } from '../../../generated/types/hostapp.js';
import type { operations as MiniappOperations } from '../../../generated/types/miniapp.js';
import type { operations } from '../../../generated/types/platform.js';
import type { OperationContract } from '../../contract/operations.js';
import type { Partner, Registry } from '../registry/registry.js';
import type { PlatformContext } from '../context.js';

/** Operations the platform serves (its document also lists the partner operations as webhooks). */
export type PlatformOperationId = Exclude<keyof operations, keyof HostappOperations | keyof MiniappOperations>;

type JsonBody<T> = T extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : T extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B
    : undefined;
type SuccessBody<T> = T extends { responses: { 200: { content: { 'application/json': infer B } } } }
  ? B
  : T extends { responses: { 200: { content: { 'text/plain': infer B } } } }
    ? B
    : unknown;

/** Who sends a request, read from its (validated) body: the party that must authenticate. */
export interface CallerRef {
  kind: Partner['kind'];
  id: string;
}

/** The parameters an operation declares `in` one place, as the generated operations type them. */
type ParametersIn<Id extends PlatformOperationId, In extends 'path' | 'query' | 'header'> = operations[Id]['parameters'] extends {
  [K in In]?: infer P;
}
  ? [NonNullable<P>] extends [never]
    ? Record<string, never>
    : NonNullable<P>
  : Record<string, never>;

/** Header parameters by the lower-case names Node gives them. */
type LowerCaseKeys<T> = { [K in keyof T as Lowercase<K & string>]: T[K] };

export interface OperationRequest<Id extends PlatformOperationId> {
  op: OperationContract;
  /** The validated body, numbers kept exactly (LosslessNumber at run time: never do arithmetic on money). */
  body: JsonBody<operations[Id]>;
  /** Validated path parameters, each of the type its schema gives (text, or a number for integers). */
  params: ParametersIn<Id, 'path'>;
  /** Validated query parameters, as typed as the path's (integers and booleans as such). */
  query: ParametersIn<Id, 'query'>;
  /** The operation's declared headers (validated), by lower-case name. */
  headers: LowerCaseKeys<ParametersIn<Id, 'header'>>;
  /** The authenticated partner, for operations with a caller or a signed-in dashboard partner. */
  caller: Partner | undefined;
  /**
   * The partners as they were when the request arrived: authentication and the handler read this
   * one snapshot, so a dashboard change landing mid-request cannot mix two (ADR 0028).
   */
  registry: Registry;
  requestId: string;
  log: Logger;
}

export interface Reply<Id extends PlatformOperationId> {
  status?: number;
  body: SuccessBody<operations[Id]> | unknown;
  headers?: Record<string, string>;
  contentType?: string;
}

/**
 * One platform operation. Its module is named after its operationId, and operations/index.ts
 * maps each operationId to it: the handler is one hop from the contract.
 */
export interface OperationHandler<Id extends PlatformOperationId> {
  /** The party named in the body that must prove itself (omitted for admin and probes). */
  caller?: (body: JsonBody<operations[Id]>) => CallerRef;
  handle(request: OperationRequest<Id>, platform: PlatformContext): Promise<Reply<Id>>;
}

export type HandlerTable = { [Id in PlatformOperationId]: OperationHandler<Id> };
