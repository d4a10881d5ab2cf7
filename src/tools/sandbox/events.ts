import type { DeliveryContext } from '../../shipped/partner-kit/index.js';

/** An E7 event as a simulated partner received it. */
export interface ReceivedEvent {
  event_id: string;
  body: unknown;
  received_at: string;
}

/** An E7 handler that keeps every event in `events` and acknowledges it with its event id. */
export function recordEvents(events: ReceivedEvent[]): (event: unknown, ctx: DeliveryContext) => { received: true; event_id: string } {
  return (event, ctx) => {
    events.push({ event_id: ctx.eventId, body: event, received_at: new Date().toISOString() });
    return { received: true, event_id: ctx.eventId };
  };
}

/** The event a /sandbox/send-event body describes, as both event operations of the platform take it. */
export function eventFields(body: Record<string, unknown>): {
  event_type: string;
  external_event_id?: string;
  payload: Record<string, unknown>;
} {
  const { event_type, external_event_id, payload } = body;
  return {
    event_type: event_type as string,
    ...(external_event_id !== undefined && { external_event_id: external_event_id as string }),
    payload: payload as Record<string, unknown>,
  };
}
