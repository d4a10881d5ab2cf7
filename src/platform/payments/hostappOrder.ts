import { createHash } from 'node:crypto';
import type { components as HostappSchemas } from '../../../generated/types/hostapp.js';
import type { components as PlatformSchemas } from '../../../generated/types/platform.js';
import { isJsonObject, stringifyLossless } from '../../contract/json.js';
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

/**
 * What makes two E1 requests "the same" for idempotency: the host app they go to and the E3 body
 * they become, with keys sorted and numbers by their exact text.
 */
export function requestHash(clientId: string, body: HostappCreateOrderPaymentRequest): string {
  return createHash('sha256')
    .update(clientId)
    .update('\n')
    .update(stringifyLossless(sortKeys(body)))
    .digest('hex');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  // isJsonObject, not `value.constructor === Object`: a custom attribute named `constructor` is data (ADR 0015).
  if (!isJsonObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
