import type { Request, RequestHandler } from 'express';
import { describeVerificationFailure, signatureInput, verifyRequest } from '../../wire/signing.js';
import { InboundRefusal, readInboundBody } from '../../contract/inboundJson.js';
import { isJsonObject, parseLossless, stringifyLossless } from '../../contract/json.js';
import { check, type OperationContract } from '../../contract/operations.js';
import { maxBodyBytes } from '../../contract/limits.js';
import { BodyTooLarge, ClientAborted, readBodyBytes } from '../../wire/rawBody.js';
import { decodeUserIdHeader } from '../../wire/userIdHeader.js';
import { checkAuthorization, type AuthorizationRule } from './authorization.js';
import { pipelineErrorCodes } from './contractAnswers.js';
import type { ReplayCache } from './replayCache.js';
import type { AnswerStore, PartnerKitLogger, RequestContext } from './types.js';

/** How one partner operation is served; built by the router factories. */
export interface OperationBinding {
  op: OperationContract;
  authorization: AuthorizationRule;
  signingSecrets: readonly string[] | undefined;
  replayCache: ReplayCache;
  /** Where first answers are remembered per event id; undefined when the operation is not idempotent on one. */
  answers: AnswerStore | undefined;
  logger: PartnerKitLogger;
  handle(input: unknown, ctx: RequestContext): unknown;
}

/** A refusal decided before the handler runs: answered with HTTP 200 and the contract's error code. */
class Refusal extends Error {
  constructor(
    readonly kind: 'unauthorized' | 'invalidRequest',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The Express handler of one partner operation. Whatever happens it answers HTTP 200 with JSON,
 * as the partner APIs require: the handler's answer once the request is authenticated (signature
 * from the raw bytes, then Authorization) and valid against the contract, and the handler's
 * answer is valid too; otherwise `{error_code}` with the code the contract gives.
 */
export function operationHandler(binding: OperationBinding): RequestHandler {
  const { op, logger } = binding;
  const codes = pipelineErrorCodes(op);
  const inFlight = new Map<string, Promise<string>>();

  const answerOnce = async (req: Request): Promise<string> => {
    const { input, ctx } = await readAuthenticatedRequest(req, binding);
    const key = binding.answers && ctx.eventId !== undefined ? `${op.operationId}:${ctx.eventId}` : undefined;
    if (!key) return runHandler(input, ctx);
    const remembered = await binding.answers!.get(key);
    if (remembered !== undefined) return remembered;
    // A repeat arriving while the first delivery is still being handled waits for its answer.
    const running = inFlight.get(key);
    if (running) return running;
    const answer = runHandler(input, ctx).then(async (text) => {
      if (!hasErrorCode(text)) await binding.answers!.set(key, text);
      return text;
    });
    inFlight.set(key, answer);
    try {
      return await answer;
    } finally {
      inFlight.delete(key);
    }
  };

  const runHandler = async (input: unknown, ctx: RequestContext): Promise<string> => {
    let result: unknown;
    try {
      result = await binding.handle(input, ctx);
    } catch (error) {
      logger.error({ operationId: op.operationId, err: error }, `${op.operationId} handler failed; answered ${codes.unknownError}`);
      return errorAnswer(codes.unknownError);
    }
    const problem = answerProblem(op, result);
    if (problem) {
      logger.error(
        { operationId: op.operationId, problem },
        `${op.operationId} handler answered a body that breaks the contract (${problem}); answered ${codes.unknownError} instead`,
      );
      return errorAnswer(codes.unknownError);
    }
    return stringifyLossless(result);
  };

  return async (req, res) => {
    let text: string;
    try {
      text = await answerOnce(req);
    } catch (error) {
      if (error instanceof ClientAborted) return; // nobody is left to answer
      if (error instanceof Refusal) {
        logger.warn({ operationId: op.operationId, reason: error.message }, `${op.operationId} refused: ${error.message}`);
        text = errorAnswer(codes[error.kind]);
      } else {
        logger.error(
          { operationId: op.operationId, err: error },
          `${op.operationId} failed (${(error as Error)?.message ?? error}); answered ${codes.unknownError}`,
        );
        text = errorAnswer(codes.unknownError);
      }
    }
    res.status(200).type('application/json').send(text);
  };
}

async function readAuthenticatedRequest(req: Request, binding: OperationBinding): Promise<{ input: unknown; ctx: RequestContext }> {
  const { op } = binding;
  const fromQuery = op.method === 'GET';
  const raw = fromQuery ? rawQueryString(req) : await readRawBody(req);
  const rawBody = raw.toString('utf8');

  if (binding.signingSecrets && binding.signingSecrets.length > 0) {
    // One reading of the clock for the window and the replay keys' expiry, so they agree (ADR 0038).
    const nowMs = Date.now();
    const verification = verifyRequest(
      raw,
      signatureInput((name) => header(req, name)),
      binding.signingSecrets,
      Math.floor(nowMs / 1000),
    );
    if (!verification.ok) throw new Refusal('unauthorized', describeVerificationFailure(verification));
    // Every signed message the request carries is remembered, whichever secrets signed it: a copy
    // with either scheme's headers removed, or with one of a rotation's two signatures, is a replay.
    const fresh = verification.replayKeys.map((key) => binding.replayCache.remember(key.digest, key.timestamp, nowMs));
    if (fresh.includes(false)) throw new Refusal('unauthorized', 'this signature was already accepted within the replay window (replay)');
  }
  const userTokenAllowed = op.security.some((requirement) => 'userAccessToken' in requirement);
  const authorized = await checkAuthorization(header(req, 'authorization'), {
    ...binding.authorization,
    acceptUserAccessToken: userTokenAllowed ? binding.authorization.acceptUserAccessToken : undefined,
  });
  if (!authorized.ok) throw new Refusal('unauthorized', authorized.reason);

  let input: unknown;
  const query = new URLSearchParams(fromQuery ? rawBody : '');
  if (fromQuery) {
    // The same rules as for a body (ADR 0015): each name once, never `__proto__`.
    const names = [...query.keys()];
    const repeated = names.find((name, index) => names.indexOf(name) !== index);
    if (repeated !== undefined) throw new Refusal('invalidRequest', `query parameter ${repeated} must be given once`);
    if (names.includes('__proto__')) throw new Refusal('invalidRequest', 'a query parameter named __proto__ is not accepted');
    input = Object.fromEntries(query);
  } else {
    // The platform's own reader (ADR 0015): same refusals, same own-property objects.
    try {
      input = readInboundBody(op, raw);
    } catch (error) {
      if (error instanceof InboundRefusal) throw new Refusal('invalidRequest', error.message);
      throw error;
    }
  }
  for (const parameter of op.parameters) {
    if (parameter.in !== 'header' && parameter.in !== 'query') continue;
    const values = parameter.in === 'query' ? query.getAll(parameter.name) : headerValues(req, parameter.name);
    if (values.length === 0) {
      if (parameter.required) throw new Refusal('invalidRequest', `${parameter.in} parameter ${parameter.name} is required`);
      continue;
    }
    if (values.length > 1) throw new Refusal('invalidRequest', `${parameter.in} parameter ${parameter.name} must be given once`);
    const result = check(parameter.validate, values[0]);
    if (!result.valid)
      throw new Refusal('invalidRequest', `${parameter.in} parameter ${parameter.name} ${result.message.replace(/^the body /, '')}`);
  }

  const attempt = header(req, 'x-minibridge-delivery-attempt');
  const userIdHeader = header(req, 'x-user-id');
  let userId: string | undefined;
  try {
    userId = userIdHeader === undefined ? undefined : decodeUserIdHeader(userIdHeader);
  } catch (error) {
    throw new Refusal('invalidRequest', (error as Error).message);
  }
  return {
    input,
    ctx: {
      operationId: op.operationId,
      userId,
      userAccessToken: authorized.userAccessToken,
      eventId: header(req, 'x-minibridge-event-id'),
      deliveryAttempt: attempt === undefined ? undefined : Number(attempt),
      headers: req.headers,
      rawBody,
    },
  };
}

/** Why a handler's answer cannot be sent, or undefined when it matches the operation's 200 response. */
function answerProblem(op: OperationContract, result: unknown): string | undefined {
  if (result === undefined) return 'it answered nothing; return a JSON value';
  try {
    stringifyLossless(result);
  } catch (error) {
    return `it is not JSON: ${(error as Error).message}`;
  }
  const validate = op.responses.get('200')?.validate;
  if (!validate) return undefined;
  const verdict = check(validate, result);
  return verdict.valid ? undefined : verdict.message;
}

function errorAnswer(code: string): string {
  return JSON.stringify({ error_code: code });
}

function hasErrorCode(text: string): boolean {
  const value = parseLossless(text);
  return isJsonObject(value) && Object.hasOwn(value, 'error_code');
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function headerValues(req: Request, name: string): string[] {
  const value = req.headers[name.toLowerCase()];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The raw query string as sent, without `?`: what a GET request's signature covers. */
function rawQueryString(req: Request): Buffer {
  const url = req.originalUrl ?? req.url;
  const mark = url.indexOf('?');
  return Buffer.from(mark === -1 ? '' : url.slice(mark + 1), 'utf8');
}

/** The request body's exact bytes, read here unless a raw or text body parser ran first. */
async function readRawBody(req: Request): Promise<Buffer> {
  const parsed: unknown = req.body;
  if (Buffer.isBuffer(parsed)) return parsed;
  if (typeof parsed === 'string') return Buffer.from(parsed, 'utf8');
  if (parsed !== undefined) {
    throw new Error(
      'the request body was already parsed by another middleware (e.g. express.json()); mount the partner-kit router before any JSON body parser: it needs the raw bytes to verify signatures and keep decimals exact',
    );
  }
  try {
    return await readBodyBytes(req);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw new Refusal('invalidRequest', `the body is larger than ${maxBodyBytes()} bytes`);
    throw error;
  }
}
