import { parse, stringify } from "lossless-json";
import type { components } from "../../generated/types/platform.js";
import type { OrderPayment } from "./orderPayments.js";

type OrderCompletion = components["schemas"]["OrderCompletion"];

/**
 * The E6 body for an order payment's recorded outcome, as JSON text. custom_attributes is
 * parsed and written losslessly so its numbers keep the digits the host app sent.
 */
export function orderCompletionBody(payment: OrderPayment): string {
  const completion: OrderCompletion = {
    ...(payment.miniapp_order_id === null ? {} : { miniapp_order_id: payment.miniapp_order_id }),
    hostapp_order_payment_id: payment.order_payment_id,
    hostapp_client_id: payment.client_id,
    payment_status: payment.payment_status,
    ...(payment.payment_fail_reason === null ? {} : { payment_fail_reason: payment.payment_fail_reason }),
    ...(payment.custom_attributes === null
      ? {}
      : { custom_attributes: parse(payment.custom_attributes) as OrderCompletion["custom_attributes"] }),
  };
  const body = stringify(completion);
  if (body === undefined) throw new Error("The E6 body did not serialise");
  return body;
}
