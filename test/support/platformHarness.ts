import type { Logger } from 'pino';
import { basicAuthorization, prefixedAuthorization } from '../../src/wire/authorization.js';
import { signRequest } from '../../src/wire/signing.js';
import { operation } from '../../src/contract/operations.js';
import { expectContractAnswer } from './contractAnswer.js';
import { registryFrom, type RegistryFile } from '../../src/platform/registry/loadRegistry.js';
import { startPlatform, type RunningPlatform } from '../../src/platform/server.js';
import type { Config } from '../../src/platform/config.js';
import type { Store } from '../../src/platform/store/index.js';
import { openPlatformDatabase, type PlatformDatabase, type TestBackend } from './databases.js';
import { FakePartner } from './fakePartners.js';

export const HOSTAPP = { id: 'ha_test', secret: 'hostapp-secret-1' };
export const MINIAPP = { id: 'ma_test', secret: 'miniapp-secret-1' };
export const ADMIN_TOKEN = 'admin-token-for-tests';

export interface PlatformResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/**
 * A platform on a throw-away database of its own (in-memory PGlite, or a fresh PostgreSQL
 * database with `backend: 'postgres'`) with fake host app and miniapp servers registered as the
 * test's partners. Every answer `call` gets is checked against the contract: the status must be
 * one the operation documents and the body must match that status's schema. Error codes seen are
 * collected so a test can prove every code of the catalogue is reachable.
 */
export class PlatformHarness {
  hostapp = new FakePartner();
  miniapp = new FakePartner();
  running!: RunningPlatform;
  readonly errorCodesSeen = new Set<string>();
  private database: PlatformDatabase | undefined;

  async start(
    options: {
      backend?: TestBackend['name'];
      registry?: (registry: RegistryFile) => void;
      config?: Partial<Config>;
      log?: Logger;
      /** A store opened by the test itself (instances sharing one database); the backend's own database is then unused. */
      store?: Promise<Store>;
    } = {},
  ): Promise<this> {
    const [database] = await Promise.all([openPlatformDatabase(options.backend), this.hostapp.start(), this.miniapp.start()]);
    this.database = database;
    const registry: RegistryFile = {
      hostapps: [
        {
          client_id: HOSTAPP.id,
          secret_key: HOSTAPP.secret,
          token_prefix: 'Token',
          use_access_token: false,
          payment_status_method: 'POST',
          features: { payments: true, event_bridge: true, event_receiver: true },
          urls: {
            create_order_payment: `${this.hostapp.url}/create-order-payment`,
            get_payment_status: `${this.hostapp.url}/get-payment-status`,
            events: `${this.hostapp.url}/events`,
          },
        },
      ],
      miniapps: [
        {
          app_id: MINIAPP.id,
          secret_key: MINIAPP.secret,
          hostapps: [HOSTAPP.id],
          features: { payments: true, event_bridge: true, event_receiver: true },
          urls: { complete_order: `${this.miniapp.url}/complete-order`, events: `${this.miniapp.url}/events` },
        },
      ],
    };
    options.registry?.(registry);
    this.running = await startPlatform({
      registry: registryFrom(structuredClone(registry)),
      log: options.log,
      store: options.store,
      // A throw-away database per harness, whatever DATABASE_URL says, and no shared rate-limit
      // store unless the test names one (REDIS_URL would otherwise share budgets between suites).
      config: {
        port: 0,
        host: '127.0.0.1',
        ...database.config,
        redisUrl: undefined,
        logLevel: 'silent',
        adminToken: ADMIN_TOKEN,
        worker: { pollMs: 250, batchSize: 50, leaseMs: 60_000, enabled: true },
        ...options.config,
      },
    });
    return this;
  }

  async stop(): Promise<void> {
    try {
      await this.running?.close();
      await Promise.all([this.hostapp.stop(), this.miniapp.stop()]);
    } finally {
      await this.database?.dispose();
      this.database = undefined;
    }
  }

  miniappAuth(secret = MINIAPP.secret): string {
    return basicAuthorization(MINIAPP.id, secret);
  }

  hostappBasic(secret = HOSTAPP.secret): string {
    return basicAuthorization(HOSTAPP.id, secret);
  }

  hostappToken(secret = HOSTAPP.secret, prefix = 'Token'): string {
    return prefixedAuthorization(prefix, HOSTAPP.id, secret);
  }

  /**
   * Calls a platform operation with a raw JSON text body (so numbers are sent exactly as
   * written) and checks the answer against the contract.
   */
  async call(
    operationId: string,
    body: string | object | undefined,
    options: { authorization?: string; headers?: Record<string, string>; path?: string; method?: string; sign?: string[] } = {},
  ): Promise<PlatformResponse> {
    const op = operation(operationId);
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = { ...(text !== undefined && { 'content-type': 'application/json' }), ...options.headers };
    if (options.authorization) headers.authorization = options.authorization;
    if (options.sign) Object.assign(headers, signRequest(text ?? '', options.sign));
    const response = await fetch(this.running.url + (options.path ?? op.path), {
      method: options.method ?? op.method,
      headers,
      body: text,
    });
    const responseText = await response.text();
    const result: PlatformResponse = { status: response.status, headers: response.headers, text: responseText, body: undefined };
    result.body = expectContractAnswer(
      operationId,
      { status: response.status, contentType: response.headers.get('content-type'), text: responseText },
      { httpLevel: options.path !== undefined },
    );
    const code = (result.body as { error_code?: string } | undefined)?.error_code;
    if (code && response.status >= 400) this.errorCodesSeen.add(code);
    return result;
  }

  /**
   * The E6 deliveries the store holds for one order payment. The worker sends E6 only from these
   * rows, so when every one is delivered the miniapp server will get nothing more for it: a test
   * proves "nothing more was sent" from here, not by waiting.
   */
  async deliveriesOf(orderPaymentId: string): Promise<Array<{ status: string; attempts_made: number }>> {
    return this.running.platform.store.db.query<{ status: string; attempts_made: number }>(
      'SELECT status, attempts_made FROM deliveries WHERE order_payment_id = $1 ORDER BY seq',
      [orderPaymentId],
    );
  }

  /** Waits until `predicate` holds, polling; fails with `what` after `timeoutMs`. */
  async eventually<T>(
    what: string,
    probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
    timeoutMs = 10_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value) return value as T;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

export function e1Body(order: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    app_id: MINIAPP.id,
    client_id: HOSTAPP.id,
    order: { currency: 'VND', amount: '125000.00', miniapp_order_id: `ORD-${Math.random().toString(36).slice(2)}`, ...order },
    ...extra,
  };
}
