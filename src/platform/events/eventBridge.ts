import { hash, randomUUID } from 'node:crypto';
import type { components } from '../../../generated/types/platform.js';
import type { components as HostappComponents } from '../../../generated/types/hostapp.js';
import type { components as MiniappComponents } from '../../../generated/types/miniapp.js';
import { jsonText, jsonTextEndingWith } from '../../contract/json.js';
import { ApiError } from '../../contract/errors.js';
import { namedIdLengths } from '../../contract/records.js';
import { deliverEventToHostapp } from '../outbound/hostappCalls.js';
import { deliverEventToMiniapp } from '../outbound/miniappCalls.js';
import type { Hostapp, Miniapp, Partner, Registry } from '../registry/registry.js';
import type { PlatformContext } from '../context.js';
import { DatabaseUnavailableError, type EventDirection } from '../store/index.js';

type EventRequest = components['schemas']['HostappEventRequest'] | components['schemas']['MiniappEventRequest'];

/**
 * The event bridge (ADR 0009): checks that the sender may send and the recipient receives,
 * forwards the event to the recipient's E7 once (no platform retries), logs it, and answers with
 * the recipient's body unchanged: the exact bytes it sent (ADR 0016). The event id is stable per sender and external_event_id, so a
 * resent event reaches the receiver with the same X-Minibridge-Event-Id.
 */
export async function forwardEvent(
  platform: PlatformContext,
  registry: Registry,
  direction: EventDirection,
  sender: Partner | undefined,
  request: EventRequest,
) {
  const hostapp = direction === 'hostapp_to_miniapp' ? (sender as Hostapp) : registry.hostapp(request.client_id);
  const miniapp = direction === 'miniapp_to_hostapp' ? (sender as Miniapp) : registry.miniapp(request.app_id);
  const recipient = direction === 'hostapp_to_miniapp' ? miniapp : hostapp;
  const recipientName = direction === 'hostapp_to_miniapp' ? `miniapp ${request.app_id}` : `host app ${request.client_id}`;
  if (!sender) throw new Error('event operations have an authenticated sender');
  const eventId = eventIdFor(direction, sender.id, request.external_event_id);
  // The payload serialised once: the text logged is the text sent inside the event.
  const payload = jsonText(request.payload);
  const logEntry = {
    event_id: eventId,
    direction,
    app_id: request.app_id,
    client_id: request.client_id,
    event_type: request.event_type,
    external_event_id: request.external_event_id ?? null,
    payload,
    // Whom the event names, kept beside it so an erasure finds it without reading payloads (ADR 0041).
    ...namedIn(request.payload),
  };
  const refuse = async (error: ApiError): Promise<never> => {
    platform.metrics.events.inc({ direction, outcome: 'refused' });
    await platform.store.eventLog.record({
      ...logEntry,
      outcome: 'refused',
      error_code: error.code,
      receiver_http_status: null,
      receiver_response: null,
      duration_ms: null,
    });
    throw error;
  };
  if (!sender.features.event_bridge)
    await refuse(new ApiError('UNAUTHORIZED', `the event bridge is not enabled for ${sender.kind} ${sender.id}`));
  if (!hostapp || !miniapp || !registry.linked(miniapp, hostapp)) {
    return refuse(new ApiError('UNAUTHORIZED', `${recipientName} is not registered with ${sender.kind} ${sender.id}`));
  }
  if (!recipient!.features.event_bridge || !recipient!.features.event_receiver) {
    await refuse(new ApiError('EVENT_RECEIVER_DISABLED', `${recipientName} has not enabled its event receiver`));
  }
  // A receiver without a URL receives nothing, however often the event is sent: refused like one
  // switched off (ADR 0009), not a failed delivery the sender is told to retry.
  if (!recipient!.registration.urls?.events) {
    await refuse(new ApiError('EVENT_RECEIVER_DISABLED', `${recipientName} has not registered its event receiver URL`));
  }

  // Nothing is sent that cannot be logged. While the database is known to be down (ADR 0037) the
  // log write after delivery would fail and the sender, answered 503, would send the event again:
  // a second delivery, and to the receiver a new event when it carries no external_event_id.
  // Refused before the receiver is called, as E1 is by its first statement.
  if (!platform.store.db.availability.up) throw new DatabaseUnavailableError('the database is unavailable; the event was not sent');

  // The E7 event around the payload's one text.
  const rest = { app_id: request.app_id, client_id: request.client_id, event_type: request.event_type };
  const answer =
    direction === 'hostapp_to_miniapp'
      ? await deliverEventToMiniapp(
          platform,
          miniapp,
          jsonTextEndingWith<MiniappComponents['schemas']['Event'], 'payload'>(rest, 'payload', payload),
          eventId,
        )
      : await deliverEventToHostapp(
          platform,
          hostapp,
          jsonTextEndingWith<HostappComponents['schemas']['Event'], 'payload'>(rest, 'payload', payload),
          eventId,
        );
  const outcome = answer.ok ? 'delivered' : 'failed';
  platform.metrics.events.inc({ direction, outcome });
  await platform.store.eventLog.record({
    ...logEntry,
    outcome,
    error_code: answer.ok ? null : 'EVENT_DELIVERY_FAILED',
    receiver_http_status: answer.ok ? answer.status : 'status' in answer.failure ? answer.failure.status : null,
    receiver_response: answer.ok ? answer.text : null,
    duration_ms: answer.durationMs,
  });
  if (!answer.ok) {
    throw new ApiError(
      'EVENT_DELIVERY_FAILED',
      `the event receiver of ${recipientName} ${answer.failure.detail}; send the event again with the same external_event_id`,
      {
        'X-Minibridge-Event-Id': eventId,
      },
    );
  }
  // The receiver's bytes as they came (ADR 0016): checked to be JSON of the right shape, never re-serialised.
  return { body: answer.text, contentType: 'application/json', headers: { 'X-Minibridge-Event-Id': eventId } };
}

function eventIdFor(direction: EventDirection, senderId: string, externalEventId: string | undefined): string {
  if (externalEventId === undefined) return `evt_${randomUUID().replaceAll('-', '')}`;
  // One-shot: no Hash object per event.
  const digest = hash('sha256', `${direction}\n${senderId}\n${externalEventId}`, 'hex');
  return `evt_${digest.slice(0, 32)}`;
}

/**
 * Whom an event names (ADR 0041): the text of every `hostapp_user_id` and `order_payment_id`
 * member anywhere in its payload, in objects and arrays at any depth, each as long as such an id
 * may be (longer text is neither), each once. A payload is any object sender and receiver agree
 * on, so a user is as often named inside a `user` or an `items` member as at the top; the walk is
 * bounded by the inbound limits on the payload's size and depth.
 */
export function namedIn(payload: unknown): { names_users: string[] | null; names_payments: string[] | null } {
  const limits = namedIdLengths();
  const users = new Set<string>();
  const payments = new Set<string>();
  const pending: unknown[] = [payload];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      // One at a time: spread, an array's items are a call's arguments, and a payload's array may
      // hold more than the stack takes (130,000 items fit in 1 MiB, ADR 0015): a RangeError.
      for (const item of value) pending.push(item);
      continue;
    }
    // Plain objects only: a lossless number is a value, not a member holder.
    if (value === null || typeof value !== 'object') continue;
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) continue;
    for (const [name, member] of Object.entries(value)) {
      if (typeof member === 'string') {
        if (name === 'hostapp_user_id' && fits(member, limits.hostapp_user_id)) users.add(member);
        if (name === 'order_payment_id' && fits(member, limits.order_payment_id)) payments.add(member);
      } else pending.push(member);
    }
  }
  return { names_users: users.size > 0 ? [...users] : null, names_payments: payments.size > 0 ? [...payments] : null };
}

/** Whether text is 1 to `most` characters long, counted as the contract counts them (code points). */
function fits(text: string, most: number): boolean {
  if (text.length === 0) return false;
  return text.length <= most || (text.length <= 2 * most && [...text].length <= most);
}
