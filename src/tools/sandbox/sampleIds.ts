import { loadDocument, resolve, type JsonObject } from '../../contract/documents.js';
import type { PinnedIds } from '../../platform/store/index.js';
import sandboxRegistryFile from './registry.json' with { type: 'json' };

/**
 * The ids the request samples on the docs pages name, read from the contract's examples (the
 * samples are made from the same examples, scripts/lib/code-samples.ts). The sandbox gives them
 * to what the samples create, in page order, so that every sample runs as written on a fresh
 * `npm start` (ADR 0043): E1's example order gets E1's example order_payment_id from the
 * simulated host app, E5's example outcome makes the E6 delivery with the delivery id the admin
 * samples name, and the first secret_key the Dashboard API issues the sandbox host app gets the
 * credential id the revoke sample names.
 */
export interface SampleIds {
  /** `order.miniapp_order_id` of E1's first example. */
  miniappOrderId: string;
  /** `order_payment_id` of E1's answer example. */
  orderPaymentId: string;
  /** `payment_status` of E5's first example: the status whose E6 delivery the delivery samples name. */
  reportedStatus: string;
  deliveryId: string;
  credentialId: string;
}

const CREATE_ORDER_PAYMENT = '/api/v1/orders/create-order-payment/';
const COMPLETE_ORDER = '/api/v1/orders/complete-order/';
const SANDBOX_HOSTAPP_ID = sandboxRegistryFile.hostapps[0]!.client_id;

let known: SampleIds | undefined;

export function sampleIds(): SampleIds {
  if (known) return known;
  const document = loadDocument('platform');
  const firstExample = (path: string, pick: (operation: JsonObject) => unknown): JsonObject => {
    const media = pick(resolve<JsonObject>(document, (document.paths as JsonObject)[path]).post as JsonObject) as JsonObject;
    const example = Object.values((media.examples as JsonObject | undefined) ?? {})[0];
    if (example === undefined) throw new Error(`the contract has no example at ${path}`);
    return resolve<JsonObject>(document, example).value as JsonObject;
  };
  const requestMedia = (operation: JsonObject) =>
    (resolve<JsonObject>(document, operation.requestBody).content as JsonObject)['application/json'];
  const answerMedia = (operation: JsonObject) =>
    (resolve<JsonObject>(document, (operation.responses as JsonObject)['200']).content as JsonObject)['application/json'];
  const parameterExample = (name: string) =>
    String(resolve<JsonObject>(document, ((document.components as JsonObject).parameters as JsonObject)[name]).example);
  known = {
    miniappOrderId: String((firstExample(CREATE_ORDER_PAYMENT, requestMedia).order as JsonObject).miniapp_order_id),
    orderPaymentId: String(firstExample(CREATE_ORDER_PAYMENT, answerMedia).order_payment_id),
    reportedStatus: String(firstExample(COMPLETE_ORDER, requestMedia).payment_status),
    deliveryId: parameterExample('DeliveryId'),
    credentialId: parameterExample('CredentialIdPath'),
  };
  return known;
}

/** The store's pins for the sandbox (ADR 0043): the sandbox host app's sample delivery and issued credential. */
export function sandboxPinnedIds(): PinnedIds {
  return {
    delivery: (row) => {
      const ids = sampleIds();
      return row.client_id === SANDBOX_HOSTAPP_ID &&
        row.order_payment_id === ids.orderPaymentId &&
        row.payment_status === ids.reportedStatus
        ? ids.deliveryId
        : undefined;
    },
    credential: (row) =>
      row.partner_type === 'hostapp' && row.partner_id === SANDBOX_HOSTAPP_ID && row.kind === 'secret_key' && row.origin === 'dashboard'
        ? sampleIds().credentialId
        : undefined,
  };
}
