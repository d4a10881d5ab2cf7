import type { DeliveryContext } from '../../shipped/partner-kit/index.js';

/** An E7 event as a simulated partner received it. */
export interface ReceivedEvent {
  event_id: string;
  /** An event id already received: a retry, acknowledged as the first was. */
  repeat: boolean;
  body: unknown;
  received_at: string;
}

/** An E7 handler that keeps every delivery in `events`, repeats marked, and acknowledges it with its event id. */
export function recordEvents(events: ReceivedEvent[]): (event: unknown, ctx: DeliveryContext) => { received: true; event_id: string } {
  const seen = new Set<string>();
  return (event, ctx) => {
    const repeat = seen.has(ctx.eventId);
    seen.add(ctx.eventId);
    events.push({ event_id: ctx.eventId, repeat, body: event, received_at: new Date().toISOString() });
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
