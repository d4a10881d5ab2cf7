/**
 * Why an SDK call failed. Input codes are raised before anything is sent to the host app; the
 * others describe what happened on the bridge.
 */
export const SDK_ERROR_CODES = [
  // pay(...) input, checked against the bridge schema (the contract's own limits)
  'INVALID_AMOUNT',
  'INVALID_CURRENCY',
  'INVALID_ORDER_PAYMENT_ID',
  'INVALID_MINIAPP_ORDER_ID',
  'INVALID_EXTRA_PARAMS',
  'INVALID_PAYMENT_DATA',
  // send(...) / sendPromise(...) input
  'UNKNOWN_EVENT_NAME',
  'INVALID_EVENT_DATA',
  // the bridge
  'NO_HOST',
  'TIMEOUT',
  'HOST_ERROR',
  'HOST_REJECTED',
  'INVALID_MESSAGE',
  'CLOSED',
] as const;

export type SdkErrorCode = (typeof SDK_ERROR_CODES)[number];

export class MinibridgeSdkError extends Error {
  override readonly name = 'MinibridgeSdkError';

  constructor(
    readonly code: SdkErrorCode,
    message: string,
    /** The host app's own code, for HOST_ERROR and HOST_REJECTED (e.g. PAYMENT_IN_PROGRESS). */
    readonly hostCode?: string,
  ) {
    super(message);
  }
}
