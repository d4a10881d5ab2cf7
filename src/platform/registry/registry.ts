import type { components } from '../../../generated/types/registry.js';
import { IpAllowList } from '../auth/ipAllowList.js';
import { equalsConstantTime } from '../../wire/credentials.js';
import { basicAuthorization, prefixedAuthorization } from '../../wire/authorization.js';
import { signingSecretProblem } from '../../wire/signing.js';
import { RegistryError } from './registryError.js';
import { internalUrlNames } from '../outbound/addressPolicy.js';

type RegistryFile = components['schemas']['Registry'];
type HostappRegistration = components['schemas']['HostappRegistration'];
type MiniappRegistration = components['schemas']['MiniappRegistration'];
type Secret = components['schemas']['Secret'];

/** A registered partner with its secrets resolved; its toJSON keeps them out of logs. */
interface PartnerBase {
  /** The secret_key the platform presents on its own calls to the partner (the oldest active one during a rotation). */
  secretKey: string;
  /** Whether `presented` is one of the partner's active secret_keys (both during a rotation); constant time. */
  secretMatches(presented: string): boolean;
  /** Whether `presented` is the partner's id; constant time, the id's own digest made once per snapshot. */
  idMatches(presented: string): boolean;
  /**
   * The Authorization the platform presents on its own calls to the partner, written once per
   * snapshot: `<token_prefix> base64(client_id:secret_key)` to a host app, `Basic
   * base64(app_id:secret_key)` to a miniapp (ADR 0004, ADR 0045).
   */
  authorization: string;
  signingSecrets: string[];
  allowList: IpAllowList;
  features: Required<components['schemas']['Features']>;
  /**
   * The names of the partner's URLs an operator registered on internal addresses: the platform
   * calls those as written; every other URL only at public addresses (ADR 0038).
   */
  internalUrls: ReadonlySet<string>;
}
export interface Hostapp extends PartnerBase {
  kind: 'hostapp';
  id: string;
  registration: HostappRegistration;
  tokenPrefix: string;
}
export interface Miniapp extends PartnerBase {
  kind: 'miniapp';
  id: string;
  registration: MiniappRegistration;
  hostapps: ReadonlySet<string>;
}
export type Partner = Hostapp | Miniapp;

/** The registered partners, looked up by id. */
export class Registry {
  private readonly hostapps = new Map<string, Hostapp>();
  private readonly miniapps = new Map<string, Miniapp>();

  /**
   * A registry of partners already resolved (the dashboard's snapshot of the database).
   * `decoy` does the work of a partner's `secretMatches` and answers false: the check made for an
   * id nobody registered, so sign-in takes the same time whether an id exists or not.
   */
  static of(hostapps: readonly Hostapp[], miniapps: readonly Miniapp[], decoy?: (presented: string) => boolean): Registry {
    const registry = new Registry({ hostapps: [], miniapps: [] }, () => '', 'snapshot');
    if (decoy) registry.decoySecretCheck = decoy;
    for (const hostapp of hostapps) registry.hostapps.set(hostapp.id, withoutSecretsInJson(hostapp));
    for (const miniapp of miniapps) registry.miniapps.set(miniapp.id, withoutSecretsInJson(miniapp));
    return registry;
  }

  /** Every host app, then every miniapp (the import into the database reads them). */
  all(): { hostapps: Hostapp[]; miniapps: Miniapp[] } {
    return { hostapps: [...this.hostapps.values()], miniapps: [...this.miniapps.values()] };
  }

  constructor(file: RegistryFile, secret: (value: Secret, where: string) => string, source: string) {
    const base = (
      registration: HostappRegistration | MiniappRegistration,
      where: string,
      id: string,
      prefix: string | undefined,
    ): PartnerBase => {
      const secretKey = secret(registration.secret_key, `${where}.secret_key`);
      return {
        secretKey,
        secretMatches: equalsConstantTime(secretKey),
        idMatches: equalsConstantTime(id),
        authorization: prefix === undefined ? basicAuthorization(id, secretKey) : prefixedAuthorization(prefix, id, secretKey),
        signingSecrets: registration.signing?.enabled
          ? (registration.signing.secrets ?? []).map((value, index) => {
              const path = `${where}.signing.secrets[${index}]`;
              const signingSecret = secret(value, path);
              const problem = signingSecretProblem(signingSecret);
              if (problem) throw new RegistryError(`${source}: ${path}: ${problem}`);
              return signingSecret;
            })
          : [],
        allowList: allowList(registration.allowed_ips ?? [], `${source}: ${where}.allowed_ips`),
        // The registry file is the operator's: an internal URL in it is the operator's exception.
        internalUrls: new Set(internalUrlNames(registration.urls as Record<string, string> | undefined)),
        features: {
          payments: false,
          event_bridge: false,
          event_receiver: false,
          ...(registration.features as Partial<Required<components['schemas']['Features']>>),
        },
      };
    };
    file.hostapps.forEach((registration, index) => {
      const where = `hostapps[${index}]`;
      if (this.hostapps.has(registration.client_id))
        throw new RegistryError(`${source}: ${where}.client_id ${registration.client_id} is registered twice`);
      this.hostapps.set(
        registration.client_id,
        withoutSecretsInJson({
          kind: 'hostapp',
          id: registration.client_id,
          registration,
          tokenPrefix: registration.token_prefix,
          ...base(registration, where, registration.client_id, registration.token_prefix),
        }),
      );
    });
    file.miniapps.forEach((registration, index) => {
      const where = `miniapps[${index}]`;
      if (this.miniapps.has(registration.app_id))
        throw new RegistryError(`${source}: ${where}.app_id ${registration.app_id} is registered twice`);
      for (const clientId of registration.hostapps) {
        if (!this.hostapps.has(clientId))
          throw new RegistryError(`${source}: ${where}.hostapps names ${clientId}, which is not a registered host app`);
      }
      this.miniapps.set(
        registration.app_id,
        withoutSecretsInJson({
          kind: 'miniapp',
          id: registration.app_id,
          registration,
          hostapps: new Set(registration.hostapps),
          ...base(registration, where, registration.app_id, undefined),
        }),
      );
    });
  }

  /** A file registry's partners compare secrets with a check made once; the decoy does the same against a secret nobody has. */
  private decoySecretCheck: (presented: string) => boolean = (presented) => {
    decoyMatches(presented);
    return false;
  };

  /**
   * Whether `presented` is an active secret_key of the partner, or, for an id nobody registered,
   * the same work answering false (ADR 0038): what a sign-in costs says nothing about which ids exist.
   */
  secretMatchesOrDecoy(partner: Partner | undefined, presented: string): boolean {
    return partner ? partner.secretMatches(presented) : this.decoySecretCheck(presented);
  }

  hostapp(clientId: string): Hostapp | undefined {
    return this.hostapps.get(clientId);
  }

  miniapp(appId: string): Miniapp | undefined {
    return this.miniapps.get(appId);
  }

  /** Whether the miniapp runs in the host app ("which miniapps run in which host apps"). */
  linked(miniapp: Miniapp, hostapp: Hostapp): boolean {
    return miniapp.hostapps.has(hostapp.id);
  }

  /**
   * Partners that take part in payments without request signing, as `kind:id`: Basic secrets
   * alone are weak for money, so a production start names them (ADR 0038; signing stays opt-in
   * within v1 for compatibility).
   */
  unsignedPaymentPartners(): string[] {
    return [...this.hostapps.values(), ...this.miniapps.values()]
      .filter((partner) => partner.features.payments && partner.signingSecrets.length === 0)
      .map((partner) => `${partner.kind}:${partner.id}`);
  }

  get size(): { hostapps: number; miniapps: number } {
    return { hostapps: this.hostapps.size, miniapps: this.miniapps.size };
  }

  /** Never serialize secrets, whatever logs the registry. */
  toJSON(): { hostapps: string[]; miniapps: string[] } {
    return { hostapps: [...this.hostapps.keys()], miniapps: [...this.miniapps.keys()] };
  }
}

/** Compared against when an id is not registered; never a partner's secret (it is not a secret at all). */
const DECOY_SECRET = 'not-a-registered-secret';
/** Made once, as each partner's check is: an unknown id costs what a known one does. */
const decoyMatches = equalsConstantTime(DECOY_SECRET);

function withoutSecretsInJson<T extends Partner>(partner: T): T {
  Object.defineProperty(partner, 'toJSON', { value: () => ({ kind: partner.kind, id: partner.id }), enumerable: false });
  return partner;
}

function allowList(entries: readonly string[], where: string): IpAllowList {
  try {
    return new IpAllowList(entries);
  } catch (error) {
    throw new RegistryError(`${where}: ${(error as Error).message}`);
  }
}
