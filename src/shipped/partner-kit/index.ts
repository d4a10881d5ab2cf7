/**
 * Helpers for partner servers: Express routers that serve the host app and miniapp sides of the
 * contract with authentication, signature checks, validation and exact decimals done, plus the
 * signing and Authorization primitives for servers on other frameworks.
 */
export { createHostappRouter, createMiniappRouter, DEFAULT_TOKEN_PREFIX } from './routers.js';
export { MemoryAnswerStore } from './answerMemory.js';
export {
  signRequest,
  verifyRequest,
  signatureInput,
  standardSecret,
  newMessageId,
  replayWindowSeconds,
  legacySignatureSunset,
  type SignatureHeaders,
  type SignatureInput,
  type SignOptions,
  type Verification,
} from '../../wire/signing.js';
export { basicAuthorization, prefixedAuthorization } from '../../wire/authorization.js';
export { decimalText, parseLossless, stringifyLossless, LosslessNumber } from '../../contract/json.js';
export { decodeUserIdHeader, encodeUserIdHeader } from '../../wire/userIdHeader.js';
export type {
  AnswerStore,
  DeliveryContext,
  HostappCreateOrderPaymentAnswer,
  HostappCreateOrderPaymentBody,
  HostappEvent,
  HostappEventAnswer,
  HostappHandlers,
  HostappPaymentStatusAnswer,
  HostappPaymentStatusQuery,
  HostappRouterOptions,
  Lossless,
  MiniappEvent,
  MiniappEventAnswer,
  MiniappHandlers,
  MiniappRouterOptions,
  OrderCompletionAnswer,
  OrderCompletionBody,
  PartnerErrorAnswer,
  PartnerKitLogger,
  RequestContext,
} from './types.js';
