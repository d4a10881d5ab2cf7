/**
 * Deliberately broken partner servers, each the reference server with exactly ONE rule of the
 * contract violated, and the checks of the conformance kit that must catch it.
 */
import type { BrokenServer } from './brokenServer.js';
import { answers500Once } from './answers500Once.js';
import { answers400 } from './answers400.js';
import { htmlContentType } from './htmlContentType.js';
import { missingOrderPaymentId } from './missingOrderPaymentId.js';
import { refusesLongProductName } from './refusesLongProductName.js';
import { refusesLongNumberAmount } from './refusesLongNumberAmount.js';
import { acceptsMissingOrder } from './acceptsMissingOrder.js';
import { acceptsWrongAuthorization } from './acceptsWrongAuthorization.js';
import { ignoresSignatures } from './ignoresSignatures.js';
import { failsOnDuplicateEvent } from './failsOnDuplicateEvent.js';
import { ignoresMiniappOrderId } from './ignoresMiniappOrderId.js';
import { reusesOrderPaymentId } from './reusesOrderPaymentId.js';
import { verifiesOnlyDeprecatedSignature } from './verifiesOnlyDeprecatedSignature.js';
import { refusesEveryCredential } from './refusesEveryCredential.js';
import { ignoresExpiry } from './ignoresExpiry.js';
import { acceptsReplayedSignature } from './acceptsReplayedSignature.js';
import { acceptsStaleTimestamp } from './acceptsStaleTimestamp.js';
import { refusesUnknownHostapp, refusesUnknownMiniapp } from './refusesUnknownPartner.js';

export type { BrokenServer } from './brokenServer.js';

export const BROKEN_SERVERS: Array<() => BrokenServer> = [
  answers500Once,
  answers400,
  htmlContentType,
  missingOrderPaymentId,
  refusesLongProductName,
  refusesLongNumberAmount,
  acceptsMissingOrder,
  acceptsWrongAuthorization,
  ignoresSignatures,
  failsOnDuplicateEvent,
  ignoresMiniappOrderId,
  reusesOrderPaymentId,
  verifiesOnlyDeprecatedSignature,
  refusesEveryCredential,
  ignoresExpiry,
  acceptsReplayedSignature,
  acceptsStaleTimestamp,
  refusesUnknownMiniapp,
  refusesUnknownHostapp,
];
