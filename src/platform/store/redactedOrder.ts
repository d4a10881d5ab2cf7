/**
 * SQL for an order's JSON text reduced to its financial members (`x-financial-record`, ADR 0041),
 * as the personal details' period and a user's erasure leave it on the payment. jsonb keeps every
 * digit of a number and writes its members in one order, so two orders reduced alike compare as
 * text. `column`: the order's JSON text; `members`: a text[] parameter naming the members kept.
 */
export const redactedOrder = (column: string, members: string) =>
  `(SELECT COALESCE(jsonb_object_agg(key, value), '{}'::jsonb)::text FROM jsonb_each(${column}::jsonb) WHERE key = ANY(${members}::text[]))`;
