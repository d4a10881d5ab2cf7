import { Router } from 'express';
import { operation } from '../../contract/operations.js';
import { answerStoreFor } from './answerMemory.js';
import { operationHandler, type OperationBinding } from './operationHandler.js';
import { ReplayCache } from './replayCache.js';
import type { CommonRouterOptions, HostappRouterOptions, MiniappRouterOptions, PartnerKitLogger } from './types.js';

/** The `<prefix>` host apps use unless they changed it in the dashboard (the contract's `hostappToken`). */
export const DEFAULT_TOKEN_PREFIX = 'Token';

/**
 * An Express router serving a host app server's side of the contract: E3 createHostappOrderPayment,
 * E4 getHostappPaymentStatus (POST) and queryHostappPaymentStatus (GET), E7 receiveHostappEvent,
 * at the contract's suggested paths unless `paths` says otherwise. Mount it before any JSON body
 * parser: it reads the raw bytes itself.
 */
export function createHostappRouter(options: HostappRouterOptions): Router {
  const shared = sharedParts(options);
  const authorization = {
    scheme: options.tokenPrefix ?? DEFAULT_TOKEN_PREFIX,
    id: options.clientId,
    secret: options.secretKey,
    acceptUserAccessToken: options.acceptUserAccessToken,
  };
  const { handlers } = options;
  const router = Router();
  const bind = (operationId: string, handle: OperationBinding['handle'], answers?: OperationBinding['answers']) => {
    const op = operation(operationId);
    return { op, handler: operationHandler({ ...shared, op, authorization, answers, handle }) };
  };
  // operationHandler has validated the input (and the context) against this operation's request schema,
  // which the handler's parameter types are generated from; `never` passes it to that one handler.
  const create = bind('createHostappOrderPayment', (body, ctx) => handlers.createOrderPayment(body as never, ctx));
  const statusByPost = bind('getHostappPaymentStatus', (body, ctx) => handlers.getPaymentStatus(body as never, ctx));
  const statusByGet = bind('queryHostappPaymentStatus', (query, ctx) => handlers.getPaymentStatus(query as never, ctx));
  const events = bind('receiveHostappEvent', (event, ctx) => handlers.receiveEvent(event as never, ctx as never), shared.answers);
  router.post(options.paths?.createOrderPayment ?? create.op.path, create.handler);
  router.post(options.paths?.getPaymentStatus ?? statusByPost.op.path, statusByPost.handler);
  router.get(options.paths?.getPaymentStatus ?? statusByGet.op.path, statusByGet.handler);
  router.post(options.paths?.events ?? events.op.path, events.handler);
  return router;
}

/**
 * An Express router serving a miniapp server's side of the contract: E6 receiveOrderCompletion
 * and E7 receiveMiniappEvent, at the contract's suggested paths unless `paths` says otherwise.
 * Both are idempotent on X-Minibridge-Event-Id by default (`idempotency: 'memory'`). Mount it
 * before any JSON body parser: it reads the raw bytes itself.
 */
export function createMiniappRouter(options: MiniappRouterOptions): Router {
  const shared = sharedParts(options);
  const authorization = { scheme: 'Basic', id: options.appId, secret: options.secretKey };
  const { handlers } = options;
  const router = Router();
  const bind = (operationId: string, handle: OperationBinding['handle']) => {
    const op = operation(operationId);
    return { op, handler: operationHandler({ ...shared, op, authorization, answers: shared.answers, handle }) };
  };
  // Validated against the operation's request schema first, as for the host app's router above.
  const completion = bind('receiveOrderCompletion', (body, ctx) => handlers.receiveOrderCompletion(body as never, ctx as never));
  const events = bind('receiveMiniappEvent', (event, ctx) => handlers.receiveEvent(event as never, ctx as never));
  router.post(options.paths?.completeOrder ?? completion.op.path, completion.handler);
  router.post(options.paths?.events ?? events.op.path, events.handler);
  return router;
}

function sharedParts(options: CommonRouterOptions) {
  return {
    signingSecrets: options.signingSecrets,
    replayCache: new ReplayCache(),
    answers: answerStoreFor(options.idempotency),
    logger: options.logger ?? consoleLogger,
  };
}

const consoleLogger: PartnerKitLogger = {
  warn: (details, message) => console.warn(`[minibridge partner-kit] ${message}`, details),
  error: (details, message) => console.error(`[minibridge partner-kit] ${message}`, details),
};
