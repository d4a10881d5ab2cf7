import { forwardEvent } from '../events/eventBridge.js';
import type { OperationHandler } from './handler.js';

/** E8: an event from a host app to a miniapp's event receiver. */
export const sendHostappEvent: OperationHandler<'sendHostappEvent'> = {
  caller: (body) => ({ kind: 'hostapp', id: body.client_id }),
  handle: ({ body, caller, registry }, platform) => forwardEvent(platform, registry, 'hostapp_to_miniapp', caller, body),
};
