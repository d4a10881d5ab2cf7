import { loadDocument, resolve, type JsonObject } from './documents.js';

/*
 * The records policy the Platform API publishes as data (ADR 0041): the statement day
 * (`x-statement-day`), each kind of record's retention period with its bounds (`x-retention`) and
 * the members of an order that are its financial record (OrderDetails' `x-financial-record`).
 * Read on first use, like the limits.
 */

/** Days close in UTC, `closesAfterMs` after they end; late settlements up to `lookBackDays` old become adjustments. */
export interface StatementDayRule {
  closesAfterMs: number;
  lookBackDays: number;
}

export function statementDayRule(): StatementDayRule {
  if (!statementDay) {
    const rule = (loadDocument('platform') as JsonObject)['x-statement-day'] as JsonObject | undefined;
    const closes = rule?.closes_after_seconds;
    const lookBack = rule?.look_back_days;
    if (rule?.time_zone !== 'UTC' || !wholeNumber(closes) || !wholeNumber(lookBack) || closes >= 86_400)
      throw new Error('the Platform API lost x-statement-day (UTC, closes_after_seconds under a day, look_back_days)');
    statementDay = { closesAfterMs: closes * 1000, lookBackDays: lookBack };
  }
  return statementDay;
}
let statementDay: StatementDayRule | undefined;

export const retentionKinds = [
  'event_payloads',
  'deliveries',
  'reconcile_asks',
  'order_personal_details',
  'replay_guard',
  'idempotency_keys',
  'financial_record',
] as const;
export type RetentionKind = (typeof retentionKinds)[number];

export interface RetentionBounds {
  default: number;
  minimum: number;
  maximum: number;
}

/** Each kind's default period and bounds, in days. */
export function retentionBounds(): Record<RetentionKind, RetentionBounds> {
  if (!retention) {
    const data = (loadDocument('platform') as JsonObject)['x-retention'] as Record<string, JsonObject> | undefined;
    const read = (kind: RetentionKind): RetentionBounds => {
      const entry = data?.[kind];
      const value = { default: entry?.default, minimum: entry?.minimum, maximum: entry?.maximum };
      if (!wholeNumber(value.default) || !wholeNumber(value.minimum) || !wholeNumber(value.maximum))
        throw new Error(`the Platform API lost x-retention.${kind} (default, minimum, maximum in days)`);
      if (value.minimum > value.default || value.default > value.maximum)
        throw new Error(`x-retention.${kind}: the default lies outside its bounds`);
      return value as RetentionBounds;
    };
    if (Object.keys(data ?? {}).some((kind) => !(retentionKinds as readonly string[]).includes(kind)))
      throw new Error('x-retention names a kind of record the platform does not know');
    retention = Object.fromEntries(retentionKinds.map((kind) => [kind, read(kind)])) as Record<RetentionKind, RetentionBounds>;
  }
  return retention;
}
let retention: Record<RetentionKind, RetentionBounds> | undefined;

/** The environment variable that sets a kind's period. */
export function retentionSetting(kind: RetentionKind): string {
  return `MINIBRIDGE_RETENTION_${kind.toUpperCase()}_DAYS`;
}

/** The members of an order kept as its financial record: OrderDetails' `x-financial-record`. */
export function financialRecordMembers(): readonly string[] {
  if (!financial) {
    const document = loadDocument('platform');
    const details = resolve<JsonObject & { properties?: JsonObject }>(document, document.components.schemas?.OrderDetails);
    const members = details?.['x-financial-record'];
    if (
      !Array.isArray(members) ||
      members.length === 0 ||
      !members.every((member) => typeof member === 'string' && details.properties && member in details.properties)
    )
      throw new Error('the Platform API lost OrderDetails.x-financial-record (members of OrderDetails)');
    financial = members as string[];
  }
  return financial;
}
let financial: readonly string[] | undefined;

/**
 * The statement CSV's columns, in order (ADR 0041): `record` (payment, adjustment or total), every
 * member of StatementLine in the contract's order but `adjustment` (which `record` says), then
 * the members of StatementTotal a line lacks (`count`). The contract is their one definition: a
 * member added to a line is a column of the CSV.
 */
export function statementCsvColumns(): readonly string[] {
  if (!csvColumns) {
    const document = loadDocument('platform');
    const members = (name: string) => {
      const schema = resolve<JsonObject & { properties?: JsonObject }>(document, document.components.schemas?.[name]);
      if (!schema?.properties) throw new Error(`the Platform API lost ${name}'s properties`);
      return Object.keys(schema.properties);
    };
    const line = members('StatementLine');
    if (!line.includes('adjustment')) throw new Error('the Platform API lost StatementLine.adjustment');
    csvColumns = [
      'record',
      ...line.filter((member) => member !== 'adjustment'),
      ...members('StatementTotal').filter((member) => !line.includes(member)),
    ];
  }
  return csvColumns;
}
let csvColumns: readonly string[] | undefined;

/**
 * The most totals a JSON statement carries: Statement's `totals.maxItems`. A day with more (one
 * per currency and status, and a currency is any text an E1 sends) is read as CSV (ADR 0041).
 */
export function statementTotalsLimit(): number {
  if (totalsLimit === undefined) {
    const document = loadDocument('platform');
    const statement = resolve<JsonObject & { properties?: { totals?: JsonObject } }>(document, document.components.schemas?.Statement);
    const limit = statement?.properties?.totals?.maxItems;
    if (!wholeNumber(limit) || limit === 0) throw new Error('the Platform API lost Statement.totals.maxItems');
    totalsLimit = limit;
  }
  return totalsLimit;
}
let totalsLimit: number | undefined;

/**
 * The longest text each id an event's payload may name has (ADR 0041): a host app user id as an
 * erasure names it (ErasureRequest's `hostapp_user_id`) and a payment id (OrderPaymentId). Longer
 * text is neither, so it is never recorded as one.
 */
export function namedIdLengths(): { hostapp_user_id: number; order_payment_id: number } {
  if (!idLengths) {
    const document = loadDocument('platform');
    const schema = (name: string) =>
      resolve<JsonObject & { maxLength?: unknown; properties?: Record<string, JsonObject> }>(document, document.components.schemas?.[name]);
    const user = schema('ErasureRequest')?.properties?.hostapp_user_id?.maxLength;
    const payment = schema('OrderPaymentId')?.maxLength;
    if (!wholeNumber(user) || !wholeNumber(payment))
      throw new Error('the Platform API lost the maxLength of ErasureRequest.hostapp_user_id or OrderPaymentId');
    idLengths = { hostapp_user_id: user, order_payment_id: payment };
  }
  return idLengths;
}
let idLengths: { hostapp_user_id: number; order_payment_id: number } | undefined;

function wholeNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
