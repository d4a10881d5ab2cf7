import { loadDocument, resolve, type JsonObject } from './documents.js';

/*
 * The limits the platform enforces on what it is sent, stated once in the Platform API (ADR 0022)
 * and read from there by the code, the tests and, through the descriptions that name them, the
 * docs. Each is read on first use, not at import: the build imports these modules before it has
 * bundled the contract they read.
 */

/** The largest request body the platform and the partner kit read: `x-max-body-bytes`. */
export function maxBodyBytes(): number {
  return (bodyBytes ??= topLevelInteger('x-max-body-bytes'));
}
let bodyBytes: number | undefined;

/** The largest request head (request line and headers) the platform reads: `x-max-header-bytes`. */
export function maxHeaderBytes(): number {
  return (headerBytes ??= topLevelInteger('x-max-header-bytes'));
}
let headerBytes: number | undefined;

/** How long a client may take to send a whole request, headers and body: `x-request-timeout-ms`. */
export function requestTimeoutMs(): number {
  return (requestTimeout ??= topLevelInteger('x-request-timeout-ms'));
}
let requestTimeout: number | undefined;

/**
 * How long an E1 idempotency reservation may stay pending before a repeat takes it over (its
 * instance stopped mid-call): E1's `x-reservation-stale-after-ms`.
 */
export function reservationStaleAfterMs(): number {
  return (reservationStale ??= operationInteger('createOrderPayment', 'x-reservation-stale-after-ms'));
}
let reservationStale: number | undefined;

/** A setting's default and bounds, as the contract states them. */
export interface SettingBounds {
  default: number;
  minimum: number;
  maximum: number;
}

/** The payment lifecycle's host app settings (ADR 0039), from the Platform API's HostappSettingsFields. */
export interface LifecycleSettings {
  paymentLifetimeSeconds: SettingBounds;
  reconcileAfterSeconds: SettingBounds;
}

export function lifecycleSettings(): LifecycleSettings {
  if (lifecycle === undefined) {
    const document = loadDocument('platform');
    const fields = resolve<{ properties?: Record<string, JsonObject> }>(document, document.components.schemas?.HostappSettingsFields);
    const bounds = (name: string): SettingBounds => {
      const property = fields?.properties?.[name];
      const schema = resolve(document, property);
      const value = { default: property?.default, minimum: schema?.minimum, maximum: schema?.maximum };
      if (!positiveInteger(value.default) || !positiveInteger(value.minimum) || !positiveInteger(value.maximum))
        throw new Error(`the Platform API lost the default or bounds of HostappSettingsFields.${name}`);
      if (value.minimum > value.default || value.default > value.maximum)
        throw new Error(`HostappSettingsFields.${name}: the default lies outside its bounds`);
      return { default: value.default, minimum: value.minimum, maximum: value.maximum };
    };
    lifecycle = { paymentLifetimeSeconds: bounds('payment_lifetime_seconds'), reconcileAfterSeconds: bounds('reconcile_after_seconds') };
  }
  return lifecycle;
}
let lifecycle: LifecycleSettings | undefined;

/** A list operation's page size when the `limit` parameter is absent, and the most it may ask for. */
export interface PageSize {
  default: number;
  maximum: number;
}

/** The `default` and `maximum` of the Platform API's `limit` parameter (components/parameters/Limit). */
export function pageSize(): PageSize {
  if (page === undefined) {
    const document = loadDocument('platform');
    const parameter = resolve(document, document.components.parameters?.Limit);
    const schema = resolve(document, parameter?.schema);
    const { default: fallback, maximum } = schema ?? {};
    if (!positiveInteger(fallback) || !positiveInteger(maximum) || fallback > maximum) {
      throw new Error('the Platform API lost the default or maximum of its limit parameter');
    }
    page = { default: fallback, maximum };
  }
  return page;
}
let page: PageSize | undefined;

function topLevelInteger(name: string): number {
  const value = (loadDocument('platform') as JsonObject)[name];
  if (!positiveInteger(value)) throw new Error(`the Platform API lost ${name} (a positive integer)`);
  return value;
}

/** An `x-` integer on the Platform API operation `operationId`. */
function operationInteger(operationId: string, name: string): number {
  for (const pathItem of Object.values(loadDocument('platform').paths ?? {})) {
    for (const operation of Object.values(resolve(loadDocument('platform'), pathItem) ?? {})) {
      if (typeof operation !== 'object' || operation === null || (operation as JsonObject).operationId !== operationId) continue;
      const value = (operation as JsonObject)[name];
      if (!positiveInteger(value)) throw new Error(`the Platform API lost ${name} on ${operationId} (a positive integer)`);
      return value;
    }
  }
  throw new Error(`the Platform API has no operation ${operationId}`);
}

function positiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}
