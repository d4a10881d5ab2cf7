/** Entry of the browser file generated/sdk/minibridge-host.js: the host side of the bridge for web host apps. */
export { createHostBridge } from './host.js';
export { miniappFrameEndpoint } from './endpoints.js';
export { validateMessage, describeViolations } from './validation.js';
export { MinibridgeWebAppCustomEvent } from './miniapp.js';
export { BRIDGE_PROTOCOL, BRIDGE_PROTOCOL_VERSION, PAYMENT_RESULT_STATUSES } from '../../../generated/sdk/bridge-contract.js';
