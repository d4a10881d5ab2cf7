import type { Request, RequestHandler, Response, Router } from 'express';
import { authenticatePartner } from '../auth/authenticate.js';
import { readCredentials, safeEqual } from '../../wire/credentials.js';
import { deprecatedSchemeHeaders, signatureInput } from '../../wire/signing.js';
import { check, contractOperations, type OperationContract } from '../../contract/operations.js';
import type { HandlerTable, OperationRequest, PlatformOperationId } from '../operations/handler.js';
import type { Partner } from '../registry/registry.js';
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
    const handler = handlers[op.operationId as PlatformOperationId];
    if (!handler) throw new Error(`no handler for platform operation ${op.operationId}`);
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
        const callerRef = handler.caller?.(request.body as never);
        const caller = await admit(req, res, op, callerRef, request.raw, platform);
        // Accepted on the deprecated X-Minibridge-* signature: say so, with its sunset (ADR 0019).
        if (caller && caller.signingSecrets.length > 0)
          setHeaders(
            res,
            deprecatedSchemeHeaders(
              true,
              signatureInput((name) => header(req, name)),
            ),
          );
        const operationRequest = new IncomingOperation(request, caller, req);
        const reply = await handler.handle(operationRequest as unknown as OperationRequest<never>, platform);
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
  // (case-insensitive, one optional trailing slash). Anything else goes on to the router.
  return (req, res, next) => {
    const route = fixedPaths.get(fixedPathKey(req.method, req.path));
    if (route) route(req, res);
    else next();
  };
}

function fixedPathKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase()}`;
}

async function readRequest(req: Request, op: OperationContract) {
  let raw: Buffer = Buffer.alloc(0);
  let body: unknown;
  if (op.validateBody) ({ raw, value: body } = await readJsonBody(req, op));
  const params: Record<string, string> = {};
  const query: Record<string, string | undefined> = {};
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
    if (parameter.in === 'path') params[parameter.name] = value;
    if (parameter.in === 'query') query[parameter.name] = value;
  }
  return { op, raw, body, params, query };
}

/**
 * What a handler gets: OperationRequest (checked here, all but the body, whose type depends on the
 * operation). The headers and the request's child logger are made only when the handler reads
 * them: most handlers log nothing and read no header.
 */
class IncomingOperation implements Omit<OperationRequest<PlatformOperationId>, 'body'> {
  readonly op: OperationContract;
  readonly raw: Buffer;
  readonly body: unknown;
  readonly params: Record<string, string>;
  readonly query: Record<string, string | undefined>;
  readonly requestId: string;
  #headers: Record<string, string | undefined> | undefined;

  constructor(
    request: Awaited<ReturnType<typeof readRequest>>,
    readonly caller: Partner | undefined,
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

/**
 * Authenticates, then counts the request (ADR 0017). Only an authenticated request spends its
 * partner's budget, so nobody who merely knows an app_id or client_id can exhaust it; a failed
 * authentication spends the budget of its source address instead, and past that budget it is
 * answered 429. Correct credentials are never refused for what others sent from the same address.
 */
async function admit(
  req: Request,
  res: Response,
  op: OperationContract,
  callerRef: { kind: Partner['kind']; id: string } | undefined,
  raw: Buffer,
  platform: PlatformContext,
): Promise<Partner | undefined> {
  const admin = !callerRef && op.security.some((s) => 'adminToken' in s || 'dashboardOperator' in s);
  const dashboardPartner = !callerRef && op.security.some((s) => 'dashboardPartner' in s);
  if (!callerRef && !admin && !dashboardPartner) return undefined;
  let caller: Partner | undefined;
  try {
    if (callerRef) caller = await authenticateCaller(req, op, callerRef, raw, platform);
    else if (dashboardPartner && !/^Bearer /i.test(req.headers.authorization ?? '')) {
      caller = authenticateDashboardPartner(req, platform);
      callerRef = { kind: caller.kind, id: caller.id };
    } else authenticateAdmin(req, platform);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'UNAUTHORIZED') {
      const source = `source:${req.ip ?? 'unknown'}`;
      const decision = await platform.rateLimiters.failedAuthentication.take(source);
      if (!decision.allowed) {
        const { perSecond } = platform.rateLimiters.failedAuthentication.budget;
        throw new ApiError(
          'RATE_LIMITED',
          `more than ${perSecond} failed authentications per second from ${req.ip ?? 'this address'}; check the credentials, then retry after ${decision.retryAfterSeconds} s`,
          decision.headers,
        );
      }
      setHeaders(res, decision.headers);
    }
    throw error;
  }
  const limitKey = callerRef ? `${callerRef.kind}:${callerRef.id}` : 'admin';
  const decision = await platform.rateLimiters.partner.take(limitKey);
  if (!decision.allowed) {
    const { perSecond } = platform.rateLimiters.partner.budget;
    throw new ApiError(
      'RATE_LIMITED',
      `more than ${perSecond} requests per second from ${callerRef?.id ?? 'the admin token'}; retry after ${decision.retryAfterSeconds} s`,
      decision.headers,
    );
  }
  setHeaders(res, decision.headers);
  return caller;
}

function setHeaders(res: Response, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

async function authenticateCaller(
  req: Request,
  op: OperationContract,
  callerRef: { kind: Partner['kind']; id: string },
  raw: Buffer,
  platform: PlatformContext,
): Promise<Partner> {
  const partner = callerRef.kind === 'hostapp' ? platform.registry.hostapp(callerRef.id) : platform.registry.miniapp(callerRef.id);
  const field = callerRef.kind === 'hostapp' ? 'client_id' : 'app_id';
  if (!partner) throw new ApiError('UNAUTHORIZED', `${field} ${callerRef.id} is not registered`);
  const scheme = op.security.some((s) => 'hostappToken' in s) ? 'prefixed' : 'basic';
  await authenticatePartner(
    partner,
    scheme,
    {
      authorization: req.headers.authorization,
      signature: signatureInput((name) => header(req, name)),
      signedBytes: raw,
      ip: req.ip,
    },
    (digest, expiresAt) => platform.store.replayGuard.remember(digest, expiresAt),
    // The replay guard's clock: the window check and the guard's expiry read one time (ADR 0038).
    Math.floor(platform.store.replayGuard.now().getTime() / 1000),
  );
  return partner;
}

/**
 * A partner signing in to the Dashboard API (ADR 0027): `Basic base64(id:secret_key)` with any
 * active secret_key, from inside its allow-list when it has one. Request signatures are not
 * asked for: the dashboard is used from a browser. An id registered both as a host app and as a
 * miniapp is whichever the secret belongs to.
 */
function authenticateDashboardPartner(req: Request, platform: PlatformContext): Partner {
  const challenge = { 'WWW-Authenticate': 'Basic realm="minibridge-dashboard"' };
  const presented = readCredentials(req.headers.authorization);
  if (!presented || presented.scheme.toLowerCase() !== 'basic')
    throw new ApiError('UNAUTHORIZED', 'sign in with "Bearer <admin token>" or "Basic base64(id:secret_key)"', challenge);
  const registry = platform.registry;
  const candidates = [registry.hostapp(presented.id), registry.miniapp(presented.id)];
  // Both kinds are checked, with the same work for an id not registered as that kind (a decoy
  // check), so timing tells neither which kinds an id is registered as nor whether it exists.
  const matches = candidates.map((partner) => registry.secretMatchesOrDecoy(partner, presented.secret));
  const partner = candidates.find((candidate, index) => candidate !== undefined && matches[index]);
  if (!partner) throw new ApiError('UNAUTHORIZED', 'the credentials do not match a registered partner', challenge);
  if (partner.allowList.size > 0 && !partner.allowList.allows(req.ip))
    throw new ApiError('UNAUTHORIZED', `requests for ${partner.id} must come from its registered addresses`, challenge);
  return partner;
}

function authenticateAdmin(req: Request, platform: PlatformContext): void {
  const challenge = { 'WWW-Authenticate': 'Bearer realm="minibridge-admin"' };
  if (!platform.config.adminToken)
    throw new ApiError('UNAUTHORIZED', 'the admin API is off: set MINIBRIDGE_ADMIN_TOKEN to turn it on', challenge);
  const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  if (!match || !safeEqual(match[1], platform.config.adminToken))
    throw new ApiError('UNAUTHORIZED', 'Authorization "Bearer <admin token>" is missing or wrong', challenge);
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
