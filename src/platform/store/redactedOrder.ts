/**
 * SQL for an order's JSON text reduced to its financial members (`x-financial-record`, ADR 0041),
 * as the personal details' period and a user's erasure leave it on the payment. jsonb keeps every
 * digit of a number and writes its members in one order, so two orders reduced alike compare as
 * text. `column`: the order's JSON text; `members`: a text[] parameter naming the members kept.
 *
 * The order is split into members as json, which only checks the text, and only the members kept
 * become jsonb: their values are the contract's Decimals, strings and booleans, all of which
 * numeric holds. Cast whole, the order's other members were read as jsonb too, and a number
 * numeric cannot hold (`1e1000000` in custom_attributes, valid JSON kept as sent, ADR 0015)
 * failed the statement: every erasure of its user, and every personal-details purge batch that
 * reached it, failed again each time and left the personal details in place.
 */
export const redactedOrder = (column: string, members: string) =>
  `(SELECT COALESCE(jsonb_object_agg(key, value::jsonb), '{}'::jsonb)::text FROM json_each(${column}::json) WHERE key = ANY(${members}::text[]))`;

/**
 * SQL for an E6 body's JSON text without its custom_attributes (OrderCompletion, ADR 0041), and
 * whether it has them: split as json for the reason above (the attributes are the host app's,
 * kept as sent), the members left (ids, status, reason, expiry: text the platform wrote) written
 * as jsonb writes them.
 */
export const withoutCustomAttributes = (column: string) =>
  `(SELECT jsonb_object_agg(key, value::jsonb)::text FROM json_each(${column}::json) WHERE key <> 'custom_attributes')`;
export const hasCustomAttributes = (column: string) => `(${column}::json -> 'custom_attributes') IS NOT NULL`;
