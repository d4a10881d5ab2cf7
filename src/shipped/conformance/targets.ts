import { basicAuthorization, prefixedAuthorization } from '../../wire/authorization.js';
import { getAt, type JsonPath } from '../../contract/jsonPath.js';
import { operation } from '../../contract/operations.js';
import { encodeUserIdHeader } from '../../wire/userIdHeader.js';
import { requestShape } from './requestShape.js';

/** Which side is verified: a partner server (host app or miniapp) or a platform deployment. */
export type Subject = 'hostapp' | 'miniapp' | 'platform';
export const SUBJECTS: readonly Subject[] = ['hostapp', 'miniapp', 'platform'];

export interface Credentials {
  id: string;
  secret: string;
}

/** Partner operations whose URL a partner registers; the contract's paths are only defaults. */
export type PartnerEndpoint = 'e3' | 'e4' | 'e6' | 'e7';

export interface TargetSettings {
  subject: Subject;
  url: string;
  /** hostapp: client_id:secret_key; miniapp: app_id:secret_key; platform: the miniapp's. */
  credentials: Credentials;
  /** platform only: the host app linked to the miniapp (E5, E8, and the recipient of events). */
  hostappCredentials?: Credentials | undefined;
  tokenPrefix: string;
  paths: Partial<Record<PartnerEndpoint, string>>;
  e4Method: 'POST' | 'GET';
  /** The other party named in partner requests (defaults: the contract's examples). */
  appId?: string | undefined;
  clientId?: string | undefined;
  /** Values to send at given body paths in every request that has them (e.g. an order your server knows). */
  fixtures?: Array<{ path: JsonPath; value: string }> | undefined;
}

/** How a value the run fixes is found: the same for every request, or made per request. */
export interface Binding {
  path: JsonPath;
  /** Fixed values (identities, ids created earlier) get no boundary values of their own. */
  fixed: boolean;
  value(purpose: 'positive' | 'other'): Promise<string> | string;
}

/** The status and body rules of the side verified (D5). */
export type Rules = 'partner' | 'platform';

export interface OperationTarget {
  operationId: string;
  /** E.g. "E3 createHostappOrderPayment". */
  name: string;
  url: string;
  rules: Rules;
  authorization?: string;
  wrongAuthorization?: string;
  /** Whether a request without Authorization must be refused (not when an allow-listed address may suffice). */
  probeMissingAuthorization: boolean;
  bindings: Binding[];
  /** The headers Minibridge (or a partner, for the platform) sends besides auth and signing. */
  headers(value: unknown, eventId: string): Record<string, string>;
  /** E6 and E7 receivers must tolerate the same event twice. */
  duplicateDelivery: boolean;
  /** E3: the same value here (order.miniapp_order_id) must get the same order_payment_id, another value another one. */
  idempotentOn?: JsonPath;
  /** E4: asked about a payment whose expires_at has passed, it must report it closed (ADR 0039). */
  expiry?: boolean;
}

/** Helpers the targets need from the run: unique values and an order payment created by the subject. */
export interface TargetTools {
  unique(prefix: string): string;
  /** An order payment id, created through the subject's own create operation (E3 or E1). */
  createOrder(fresh: boolean): Promise<string>;
  /** When payments the kit creates expire: E3 carries it, as the platform sends it (ADR 0039). */
  expiresAt(): string;
}

const E_NAMES: Record<string, string> = {
  createHostappOrderPayment: 'E3',
  getHostappPaymentStatus: 'E4',
  queryHostappPaymentStatus: 'E4 (GET)',
  receiveHostappEvent: 'E7',
  receiveOrderCompletion: 'E6',
  receiveMiniappEvent: 'E7',
  createOrderPayment: 'E1',
  getPaymentStatus: 'E2',
  completeOrder: 'E5',
  sendHostappEvent: 'E8',
  sendMiniappEvent: 'miniapp event',
  getHealth: 'liveness',
  getReadiness: 'readiness',
};

export function displayName(operationId: string): string {
  return `${E_NAMES[operationId] ?? operationId} ${operationId}`;
}

export function targets(settings: TargetSettings, tools: TargetTools): OperationTarget[] {
  const made = { hostapp: hostappTargets, miniapp: miniappTargets, platform: platformTargets }[settings.subject](settings, tools);
  // The user's fixtures come last, so they win over the kit's own values.
  const fixtures = (settings.fixtures ?? []).map(({ path, value }) => fixed(path, value));
  return made.map((target) => ({ ...target, bindings: [...target.bindings, ...fixtures] }));
}

function fixed(path: JsonPath, value: string | ((purpose: 'positive' | 'other') => Promise<string>)): Binding {
  return { path, fixed: true, value: typeof value === 'string' ? () => value : value };
}

function unique(path: JsonPath, make: () => string): Binding {
  return { path, fixed: false, value: make };
}

/** An operation of the subject at the contract's path, or for a partner at the one `--paths` gives (a path or a full URL). */
function operationAt(
  settings: TargetSettings,
  operationId: string,
  endpoint?: PartnerEndpoint,
): Pick<OperationTarget, 'operationId' | 'name' | 'url'> {
  const path = (endpoint && settings.paths[endpoint]) ?? operation(operationId).path;
  const url = /^https?:\/\//.test(path) ? path : `${settings.url.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
  return { operationId, name: displayName(operationId), url };
}

/** The Authorization a party sends, and the same with a wrong secret (which must be refused). */
function authorizations(
  authorize: (secret: string) => string,
  secret: string,
): Pick<OperationTarget, 'authorization' | 'wrongAuthorization'> {
  return { authorization: authorize(secret), wrongAuthorization: authorize(`${secret}-wrong`) };
}

const none = () => ({});

function eventIdHeader(_value: unknown, eventId: string): Record<string, string> {
  return { 'X-Minibridge-Event-Id': eventId };
}

function userHeader(value: unknown): Record<string, string> {
  const user = getAt(value, ['order', 'hostapp_user_id']);
  return typeof user === 'string' ? { 'X-User-ID': encodeUserIdHeader(user) } : {};
}

/**
 * The other party a partner's requests name (the miniapp for a host app, the host app for a
 * miniapp): the flag that sets it, and the id sent, the contract's example unless given.
 */
export function otherParty(settings: TargetSettings): { flag: string; field: string; id: string; given: boolean } | undefined {
  switch (settings.subject) {
    case 'hostapp':
      return {
        flag: '--app-id',
        field: 'app_id',
        id: settings.appId ?? exampleValue('createHostappOrderPayment', ['app_id']),
        given: settings.appId !== undefined,
      };
    case 'miniapp':
      return {
        flag: '--client-id',
        field: 'client_id',
        id: settings.clientId ?? exampleValue('receiveOrderCompletion', ['hostapp_client_id']),
        given: settings.clientId !== undefined,
      };
    case 'platform':
      return undefined;
  }
}

function hostappTargets(settings: TargetSettings, tools: TargetTools): OperationTarget[] {
  const { id, secret } = settings.credentials;
  const appId = otherParty(settings)!.id;
  const common = {
    rules: 'partner' as const,
    ...authorizations((key) => prefixedAuthorization(settings.tokenPrefix, id, key), secret),
    probeMissingAuthorization: true,
  };
  const e4 = settings.e4Method === 'GET' ? 'queryHostappPaymentStatus' : 'getHostappPaymentStatus';
  return [
    {
      ...common,
      ...operationAt(settings, 'createHostappOrderPayment', 'e3'),
      bindings: [
        fixed(['app_id'], appId),
        unique(['order', 'miniapp_order_id'], () => tools.unique('ORD')),
        fixed(['expires_at'], async () => tools.expiresAt()),
      ],
      headers: userHeader,
      duplicateDelivery: false,
      idempotentOn: ['order', 'miniapp_order_id'],
    },
    {
      ...common,
      ...operationAt(settings, e4, 'e4'),
      bindings: [fixed(['app_id'], appId), fixed(['client_id'], id), fixed(['order_payment_id'], () => tools.createOrder(false))],
      headers: none,
      duplicateDelivery: false,
      expiry: true,
    },
    {
      ...common,
      ...operationAt(settings, 'receiveHostappEvent', 'e7'),
      bindings: [fixed(['app_id'], appId), fixed(['client_id'], id)],
      headers: eventIdHeader,
      duplicateDelivery: true,
    },
  ];
}

function miniappTargets(settings: TargetSettings, tools: TargetTools): OperationTarget[] {
  const { id, secret } = settings.credentials;
  const clientId = otherParty(settings)!.id;
  const common = {
    rules: 'partner' as const,
    ...authorizations((key) => basicAuthorization(id, key), secret),
    probeMissingAuthorization: true,
    duplicateDelivery: true,
  };
  return [
    {
      ...common,
      ...operationAt(settings, 'receiveOrderCompletion', 'e6'),
      bindings: [fixed(['hostapp_client_id'], clientId), unique(['miniapp_order_id'], () => tools.unique('ORD'))],
      headers: (value, eventId) => ({ ...eventIdHeader(value, eventId), 'X-Minibridge-Delivery-Attempt': '1' }),
    },
    {
      ...common,
      ...operationAt(settings, 'receiveMiniappEvent', 'e7'),
      bindings: [fixed(['app_id'], id), fixed(['client_id'], clientId)],
      headers: eventIdHeader,
    },
  ];
}

function platformTargets(settings: TargetSettings, tools: TargetTools): OperationTarget[] {
  const miniapp = settings.credentials;
  const hostapp = settings.hostappCredentials;
  if (!hostapp) throw new Error('verify platform needs --hostapp-credentials <client_id:secret_key> of a host app linked to the miniapp');
  const asMiniapp = {
    rules: 'platform' as const,
    ...authorizations((key) => basicAuthorization(miniapp.id, key), miniapp.secret),
    // E1, E2, E5 and the miniapp event accept an allow-listed address instead of credentials.
    probeMissingAuthorization: false,
    headers: none,
    duplicateDelivery: false,
  };
  const asHostapp = { ...asMiniapp, ...authorizations((key) => basicAuthorization(hostapp.id, key), hostapp.secret) };
  const parties = [fixed(['app_id'], miniapp.id), fixed(['client_id'], hostapp.id)];
  const operations = (operationId: string) => operationAt(settings, operationId);
  const open = { rules: 'platform' as const, probeMissingAuthorization: false, bindings: [], headers: none, duplicateDelivery: false };
  return [
    {
      ...asMiniapp,
      ...operations('createOrderPayment'),
      bindings: [...parties, unique(['order', 'miniapp_order_id'], () => tools.unique('ORD'))],
    },
    {
      ...asMiniapp,
      ...operations('getPaymentStatus'),
      bindings: [...parties, fixed(['order_payment_id'], () => tools.createOrder(false))],
    },
    {
      ...asHostapp,
      ...operations('completeOrder'),
      // Each accepted completion ends a payment, so every positive case gets an order of its own.
      bindings: [...parties, fixed(['order_payment_id'], (purpose) => tools.createOrder(purpose === 'positive'))],
    },
    {
      ...asHostapp,
      ...operations('sendHostappEvent'),
      ...authorizations((key) => prefixedAuthorization(settings.tokenPrefix, hostapp.id, key), hostapp.secret),
      probeMissingAuthorization: true,
      bindings: [...parties, unique(['external_event_id'], () => tools.unique('evt'))],
    },
    { ...asMiniapp, ...operations('sendMiniappEvent'), bindings: [...parties, unique(['external_event_id'], () => tools.unique('evt'))] },
    { ...open, ...operations('getHealth') },
    { ...open, ...operations('getReadiness') },
  ];
}

/** A value of the operation's first documented request example, the default for the other party's id. */
function exampleValue(operationId: string, path: JsonPath): string {
  return String(getAt(requestShape(operationId).examples[0]?.value, path));
}
