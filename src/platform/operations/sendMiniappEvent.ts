import { forwardEvent } from '../events/eventBridge.js';
import type { OperationHandler } from './handler.js';

/** The miniapp's event-send operation: an event from a miniapp to a host app's event receiver. */
export const sendMiniappEvent: OperationHandler<'sendMiniappEvent'> = {
  caller: (body) => ({ kind: 'miniapp', id: body.app_id }),
  handle: ({ body, caller, registry }, platform) => forwardEvent(platform, registry, 'miniapp_to_hostapp', caller, body),
};
