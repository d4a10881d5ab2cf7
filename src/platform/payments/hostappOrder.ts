import { hash as digest } from 'node:crypto';
import type { components as HostappSchemas } from '../../../generated/types/hostapp.js';
import type { components as PlatformSchemas } from '../../../generated/types/platform.js';
import { canonicalJsonText, type JsonText } from '../../contract/json.js';
import { check, schemaValidator } from '../../contract/operations.js';
import { pruneToSchema } from '../../contract/prune.js';

type CreateOrderPaymentRequest = PlatformSchemas['schemas']['CreateOrderPaymentRequest'];
type HostappCreateOrderPaymentRequest = HostappSchemas['schemas']['HostappCreateOrderPaymentRequest'];

export type HostappOrderResult = { ok: true; body: HostappCreateOrderPaymentRequest } | { ok: false; message: string };

/**
 * Turns a valid E1 request into the E3 body (ADR 0003): only the fields the host app API
 * defines, values untouched. E1 lets item fields be optional but E3 requires every one, and the
 * platform neither invents item data nor drops items, so an incomplete item is refused here,
 * naming the first missing field.
 */
export function hostappOrderRequest(request: CreateOrderPaymentRequest): HostappOrderResult {
  const items = request.order.items ?? [];
  const completeItem = schemaValidator('hostapp', 'HostappOrderItem');
  for (const [index, item] of items.entries()) {
    const result = check(completeItem, item);
    if (!result.valid) return { ok: false, message: `order.items[${index}].${result.message} by the host app (E3)` };
  }
  const body = pruneToSchema('hostapp', 'HostappCreateOrderPaymentRequest', { app_id: request.app_id, order: request.order });
  return { ok: true, body: body as HostappCreateOrderPaymentRequest };
}

/** The E3 request serialised once: the text hashed for idempotency, sent (and signed), and its order stored. */
export interface HostappOrderText {
  /** The E3 body with every object's keys sorted and numbers by their exact text. */
  body: JsonText<HostappCreateOrderPaymentRequest>;
  /** The order member of that same text, as the record keeps it. */
  order: JsonText<HostappCreateOrderPaymentRequest['order']>;
  /**
   * What makes two E1 requests "the same" for idempotency: the host app they go to, the E3 body
   * they become without its expiry (an instant, different on every call), and the lifetime the
   * miniapp asked for, if it did: sha256 of client_id, a newline, that body and, with a lifetime,
   * a newline and `lifetime:<seconds>`. Without one, the hash reservations made before expiry
   * existed hold.
   */
  hash: string;
}

/** The expiry E3 carries, and the lifetime the miniapp asked for on E1 (part of the request's identity). */
export interface E3Expiry {
  expiresAt: Date;
  requestedLifetimeSeconds?: number | undefined;
}

/**
 * One serialisation of the E3 body in a canonical form (keys sorted, values untouched, item
 * order kept), so two E1 requests that differ only in member order hash alike, and the hash,
 * the stored order and the bytes sent to the host app all come from the same text.
 */
export function hostappOrderText(clientId: string, request: HostappCreateOrderPaymentRequest, expiry: E3Expiry): HostappOrderText {
  const { app_id, order, expires_at, ...rest } = request;
  // Every member of the E3 body is written below: a member the contract adds must be added here.
  const nothingElse: Record<string, never> = rest;
  void nothingElse;
  // The expiry is the caller's: the E3 request built from E1 has none of its own.
  void expires_at;
  const orderText = canonicalJsonText(order);
  const appIdText = JSON.stringify(app_id);
  // Keys in sorted order, as canonicalJsonText would write them: app_id, expires_at, order.
  const body =
    `{"app_id":${appIdText},"expires_at":${JSON.stringify(expiry.expiresAt.toISOString())},"order":${orderText}}` as JsonText<HostappCreateOrderPaymentRequest>;
  const identity = `${clientId}\n{"app_id":${appIdText},"order":${orderText}}`;
  const lifetime = expiry.requestedLifetimeSeconds === undefined ? '' : `\nlifetime:${expiry.requestedLifetimeSeconds}`;
  const hash = digest('sha256', identity + lifetime, 'hex');
  return { body, order: orderText, hash };
}
