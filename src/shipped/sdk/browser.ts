/**
 * Entry of the browser file generated/sdk/minibridge-sdk.js. `pay`, `send`, `sendPromise` and
 * `subscribe` use one SDK instance created on first use for this page's window; call
 * `configure(options)` before them to set the host origin or the time-out.
 */
import { createMinibridgeSdk, type MinibridgeSdk, type MinibridgeSdkOptions } from './miniapp.js';

let instance: MinibridgeSdk | undefined;
let pendingOptions: MinibridgeSdkOptions = {};

function sdk(): MinibridgeSdk {
  instance ??= createMinibridgeSdk(pendingOptions);
  return instance;
}

/** Sets the options of the page's SDK instance (replacing one already in use). */
export function configure(options: MinibridgeSdkOptions): void {
  instance?.close();
  instance = undefined;
  pendingOptions = options;
}

export const pay: MinibridgeSdk['pay'] = (paymentData) => sdk().pay(paymentData);
export const send: MinibridgeSdk['send'] = (eventName, data) => sdk().send(eventName, data);
export const sendPromise: MinibridgeSdk['sendPromise'] = (eventName, data, options) => sdk().sendPromise(eventName, data, options);
export const subscribe: MinibridgeSdk['subscribe'] = (callback) => sdk().subscribe(callback);

export { createMinibridgeSdk, DEFAULT_SEND_TIMEOUT_MS, MinibridgeWebAppCustomEvent } from './miniapp.js';
export { MinibridgeSdkError, SDK_ERROR_CODES } from './errors.js';
export { PAYMENT_RESULT_STATUSES } from '../../../generated/sdk/bridge-contract.js';
