/**
 * The miniapp JS SDK (E9 pay, custom events) and the host side of the bridge, as importable
 * modules. Browsers load the same code as one file: `minibridge/sdk/minibridge-sdk.js` (miniapp)
 * and `minibridge/sdk/minibridge-host.js` (web host), the package's exports of generated/sdk/.
 */
export {
  createMinibridgeSdk,
  DEFAULT_SEND_TIMEOUT_MS,
  MinibridgeWebAppCustomEvent,
  type MinibridgeEvent,
  type MinibridgeEventCallback,
  type MinibridgeSdk,
  type MinibridgeSdkOptions,
  type PayOutcome,
  type SendPromiseOptions,
} from './miniapp.js';
export { createHostBridge, type HostBridge, type HostBridgeOptions } from './host.js';
export { MinibridgeSdkError, SDK_ERROR_CODES, type SdkErrorCode } from './errors.js';
export {
  detectEndpoint,
  miniappFrameEndpoint,
  nativeWebViewEndpoint,
  parentFrameEndpoint,
  type BridgeEndpoint,
  type MessageEventLike,
  type WindowLike,
} from './endpoints.js';
export {
  validateMessage,
  describeViolations,
  type SchemaViolation,
  type ValidatedDefinition,
  type ValidationResult,
} from './validation.js';
export type * from './messages.js';
export {
  BRIDGE_ERROR_CODES,
  BRIDGE_PROTOCOL,
  BRIDGE_PROTOCOL_VERSION,
  PAYMENT_RESULT_STATUSES,
} from '../../../generated/sdk/bridge-contract.js';
