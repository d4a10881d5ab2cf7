import type { Request, RequestHandler, Response, Router } from 'express';
import { admit, authenticationOf } from '../auth/admission.js';
import { deprecatedSchemeHeaders, signatureInput } from '../../wire/signing.js';
import { check, contractOperations, type OperationContract } from '../../contract/operations.js';
import type { HandlerTable, OperationHandler, OperationRequest, PlatformOperationId } from '../operations/handler.js';
import type { Partner, Registry } from '../registry/registry.js';
import type { PlatformContext } from '../context.js';
import { ApiError, invalidInputCode } from '../../contract/errors.js';
import { setOwn } from '../../contract/json.js';
import { ClientAborted, readJsonBody } from '../../wire/rawBody.js';
import { sendError, sendLastResort, sendReply } from './respond.js';

/** Express path for an OpenAPI path template: {delivery_id} → :delivery_id. */
export function expressPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

/**
 * Mounts every platform operation of the contract on `router`, each bound to the handler of the
 * same operationId. The pipeline is the same for all: read and validate the input against the
 * contract, authenticate as the operation's security says, rate-limit, run the handler, answer.
 */
export function mountOperations(router: Router, platform: PlatformContext, handlers: HandlerTable): RequestHandler {
  const fixedPaths = new Map<string, (req: Request, res: Response) => void>();
  for (const op of contractOperations().values()) {
    if (op.api !== 'platform') continue;
    // One table entry per operationId (a missing one is a compile error); the pipeline below has
    // validated the request against this operation's contract, which its generated type describes,
    // so its handler is called through the table's common shape.
    const found = handlers[op.operationId as PlatformOperationId] as OperationHandler<PlatformOperationId> | undefined;
    if (!found) throw new Error(`no handler for platform operation ${op.operationId}`);
    const handler = found;
    const authentication = authenticationOf(op);
    if (authentication.kind === 'partner' && !handler.caller)
      throw new Error(`${op.operationId} authenticates a partner its handler does not name`);
    const method = op.method.toLowerCase() as 'get' | 'post';
    const route = (req: Request, res: Response) => {
      const handling = handleOperation(req, res).catch((error: unknown) => {
        // Answering the error failed too (a header value Node refuses, say): never leave the
        // client waiting for an answer that will not come.
        req.log.error({ err: error }, 'could not answer the request');
        sendLastResort(res, op);
      });
      platform.handling.add(handling);
      void handling.finally(() => platform.handling.delete(handling));
    };
    router[method](expressPath(op.path), route);
    if (!op.path.includes('{')) fixedPaths.set(fixedPathKey(op.method, op.path), route);
    async function handleOperation(req: Request, res: Response): Promise<void> {
      res.locals.operationId = op.operationId;
      try {
        const request = await readRequest(req, op);
        // One snapshot of the partners for the whole request (ADR 0028).
        const registry = platform.registry;
        const signature = signatureInput((name) => header(req, name));
        const admitted = await admit(platform, authentication, registry, {
          authorization: req.headers.authorization,
          signature,
          signedBytes: request.raw,
          ip: req.ip,
          callerRef: handler.caller?.(request.body as never),
        }).catch((error: unknown) => {
          // A refused request still carries its rate-limit fields.
          if (error instanceof ApiError) setHeaders(res, error.headers);
          throw error;
        });
        setHeaders(res, admitted.headers);
        const caller = admitted.caller;
        // Accepted on the deprecated X-Minibridge-* signature: say so, with its sunset (ADR 0019).
        if (caller && caller.signingSecrets.length > 0) setHeaders(res, deprecatedSchemeHeaders(true, signature));
        // The request was validated against this operation's contract, which its generated type describes.
        const incoming = new IncomingOperation(request, caller, registry, req) as unknown as OperationRequest<PlatformOperationId>;
        const reply = await handler.handle(incoming, platform);
        sendReply(res, reply);
      } catch (error) {
        if (error instanceof ClientAborted) {
          // Nobody is left to answer; an abort is the client's doing, not a platform failure.
          req.log.info({ reason: error.message }, 'request aborted by the client');
          return;
        }
        sendError(res, error, op, req.log);
      }
    }
  }
  // The router tries its routes one by one for every request; a path without parameters (E1, E2,
  // E5, the event operations) is found by one lookup, matched as the router would match it
  // (case-insensitive, one optional trailing slash), and answered without Express. Anything else
  // goes on (`next`) to Express.
  return (req, res, next) => {
    const route = fixedPaths.get(fixedPathKey(req.method, req.path));
    if (!route) {
      next();
      return;
    }
    // What Express's app.handle sets up before its router, and the pipeline reads.
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Response['locals'];
    route(req, res);
  };
}

function fixedPathKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase()}`;
}

async function readRequest(req: Request, op: OperationContract) {
  let raw: Buffer = Buffer.alloc(0);
  let body: unknown;
  if (op.validateBody) ({ raw, value: body } = await readJsonBody(req, op));
  const params: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  for (const parameter of op.parameters) {
    const value =
      parameter.in === 'path'
        ? req.params[parameter.name]
        : parameter.in === 'query'
          ? req.query[parameter.name]
          : req.headers[parameter.name.toLowerCase()];
    if (value === undefined) {
      if (parameter.required) throw new ApiError(invalidInputCode(op), `${parameter.in} parameter ${parameter.name} is required`);
      continue;
    }
    if (typeof value !== 'string')
      throw new ApiError(invalidInputCode(op), `${parameter.in} parameter ${parameter.name} must be given once`);
    if (value.includes('\0'))
      throw new ApiError(invalidInputCode(op), `${parameter.in} parameter ${parameter.name} must not contain the NUL character (U+0000)`);
    // Query and path values arrive as text; integers are checked as numbers, `true`/`false` as booleans.
    const typed = /^-?\d+$/.test(value)
      ? parameter.validate(value)
        ? value
        : Number(value)
      : (value === 'true' || value === 'false') && !parameter.validate(value)
        ? value === 'true'
        : value;
    const result = check(parameter.validate, typed);
    if (!result.valid)
      throw new ApiError(invalidInputCode(op), `${parameter.in} parameter ${parameter.name} ${result.message.replace(/^the body /, '')}`);
    if (parameter.in === 'path') setOwn(params, parameter.name, typed);
    if (parameter.in === 'query') setOwn(query, parameter.name, typed);
  }
  return { op, raw, body, params, query };
}

/**
 * What a handler gets: OperationRequest, its parameters validated and typed as its schemas say.
 * The headers and the request's child logger are made only when the handler reads them: most
 * handlers log nothing and read no header.
 */
class IncomingOperation {
  readonly op: OperationContract;
  readonly raw: Buffer;
  readonly body: unknown;
  readonly params: Record<string, unknown>;
  readonly query: Record<string, unknown>;
  readonly requestId: string;
  #headers: Record<string, string | undefined> | undefined;

  constructor(
    request: Awaited<ReturnType<typeof readRequest>>,
    readonly caller: Partner | undefined,
    readonly registry: Registry,
    private readonly req: Request,
  ) {
    ({ op: this.op, raw: this.raw, body: this.body, params: this.params, query: this.query } = request);
    this.requestId = req.id;
  }

  /** The request's headers, each one value: Node joins repeats itself, all but `set-cookie`, joined here with ', '. */
  get headers(): Record<string, string | undefined> {
    if (!this.#headers) {
      const headers: Record<string, string | undefined> = {};
      for (const name of Object.keys(this.req.headers)) {
        const value = this.req.headers[name];
        setOwn(headers, name, Array.isArray(value) ? value.join(', ') : value);
      }
      this.#headers = headers;
    }
    return this.#headers;
  }

  get log() {
    return this.req.log;
  }
}

function setHeaders(res: Response, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
