/**
 * A partner's URL whose host name leads inside (ADR 0038): every partner call (E3, E4, E6, both
 * E7s) checks the address it connects to, resolved at connect time, against the ranges
 * registration refuses; a refusal reads the same whether anything listens there or not, and the
 * operator's explicit exception holds only for the URLs an operator registered internally.
 * Name resolution is steered by replacing `dns.lookup` for the test's own names only.
 */
import dns from 'node:dns';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import { basicAuthorization } from '../../../src/wire/authorization.js';
import { isInternalHost, isPublicAddress, REFUSED_BY_POLICY, AddressRefused } from '../../../src/platform/outbound/addressPolicy.js';
import { httpCall } from '../../../src/platform/outbound/httpCall.js';
import { describeOnBackends } from '../../support/databases.js';
import { ADMIN_TOKEN, HOSTAPP, MINIAPP, PlatformHarness, e1Body } from '../../support/platformHarness.js';

type LookupAnswer = { address: string; family: number }[];
/** What the test's names resolve to; every other name resolves as it always does. */
const names = new Map<string, () => LookupAnswer>();
const lookups: string[] = [];
const realLookup = dns.lookup;

beforeAll(() => {
  vi.spyOn(dns, 'lookup').mockImplementation(((host: string, options: unknown, callback: unknown) => {
    const steer = names.get(host);
    if (!steer) return (realLookup as (...args: unknown[]) => void)(host, options, callback);
    lookups.push(host);
    const done = (typeof options === 'function' ? options : callback) as (error: Error | null, addresses: LookupAnswer) => void;
    process.nextTick(() => done(null, steer()));
  }) as typeof dns.lookup);
});
afterAll(() => vi.restoreAllMocks());
afterEach(() => {
  names.clear();
  lookups.length = 0;
});

const v4 = (address: string) => ({ address, family: 4 });
const v6 = (address: string) => ({ address, family: 6 });

describe('the ranges, one definition for registration and connection', () => {
  test.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['::1', false],
    ['::', false],
    ['::ffff:127.0.0.1', false],
    ['::7f00:1', false],
    ['fe80::1%eth0', false],
    ['fd00::1', false],
    ['64:ff9b::7f00:1', false],
    ['64:ff9b::127.0.0.1', false],
    ['64:ff9b::5db8:d70e', true],
    ['64:ff9b:1::5db8:d70e', false],
    ['::ffff:93.184.215.14', true],
    ['not an address', false],
    ['93.184.215.14', true],
    ['2606:4700::6810:85e5', true],
  ])('%s public: %s', (address, expected) => expect(isPublicAddress(address)).toBe(expected));

  test.each([
    ['localhost.', true],
    ['LOCALHOST', true],
    ['api.localhost.', true],
    ['db.internal.', true],
    ['printer.local', true],
    ['[::ffff:7f00:1]', true],
    ['[fe80::1]', true],
    ['127.0.0.1', true],
    ['partner.example', false],
    ['93.184.215.14', false],
  ])('%s names an internal host by itself: %s', (host, expected) => expect(isInternalHost(host)).toBe(expected));
});

describe('the connection to a partner URL', () => {
  let open: Server;
  const sockets = new Set<Socket>();
  let openPort = 0;
  let closedPort = 0;
  beforeAll(async () => {
    open = createServer((socket) => {
      sockets.add(socket.on('close', () => sockets.delete(socket)));
      socket.end('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 13\r\n\r\n{"secret":42}');
    });
    await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve));
    openPort = (open.address() as { port: number }).port;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
  });
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => open.close(resolve));
  });

  const call = (url: string, reach: 'public' | 'operator-approved' = 'public') =>
    httpCall(new URL(url), { method: 'POST', headers: {}, body: '{}', timeoutMs: 2_000, maxAnswerBytes: 1_000, reach });
  const refusal = async (url: string) => {
    const error = await call(url).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error, url).toBeInstanceOf(AddressRefused);
    return (error as Error).message;
  };

  test('a name resolving to loopback is refused at connect time, an open port and a closed one alike', async () => {
    names.set('inside.partner.test', () => [v4('127.0.0.1')]);
    expect(await refusal(`http://inside.partner.test:${openPort}/`)).toBe(REFUSED_BY_POLICY);
    expect(await refusal(`http://inside.partner.test:${closedPort}/`)).toBe(REFUSED_BY_POLICY);
    // The same URL written with the address is refused before any connection, too.
    expect(await refusal(`http://127.0.0.1:${openPort}/`)).toBe(REFUSED_BY_POLICY);
    expect(await refusal(`http://[::ffff:127.0.0.1]:${openPort}/`)).toBe(REFUSED_BY_POLICY);
  });

  test('a name resolving to a private, link-local or mapped address, or to a public one and a private one, is refused', async () => {
    for (const [name, answer] of [
      ['metadata.partner.test', [v4('169.254.169.254')]],
      ['private.partner.test', [v4('10.0.0.8')]],
      ['mapped.partner.test', [v6('::ffff:127.0.0.1')]],
      ['mixed.partner.test', [v4('93.184.215.14'), v4('127.0.0.1')]],
      ['nothing.partner.test', []],
    ] as const) {
      names.set(name, () => [...answer]);
      expect(await refusal(`http://${name}:${openPort}/`)).toBe(REFUSED_BY_POLICY);
    }
  });

  test('every new connection resolves again: a name that turns to loopback (DNS rebinding) is refused then', async () => {
    let turns = 0;
    names.set('rebinding.partner.test', () => (++turns === 1 ? [v4('192.0.2.10')] : [v4('127.0.0.1')]));
    // The first connection goes to the public address it checked (TEST-NET-1: nothing answers there).
    const first = await call(`http://rebinding.partner.test:${openPort}/`).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    expect(first).not.toBe('AddressRefused');
    expect(await refusal(`http://rebinding.partner.test:${openPort}/`)).toBe(REFUSED_BY_POLICY);
    expect(lookups.filter((name) => name === 'rebinding.partner.test')).toHaveLength(2);
  });

  test('an operator-approved URL is called as written', async () => {
    expect((await call(`http://127.0.0.1:${openPort}/`, 'operator-approved')).status).toBe(200);
  });
});

describeOnBackends('partner calls to a registered name that leads inside', (backend) => {
  // A platform of its own for each test: the tests move the partners' URLs (and with them the
  // operator's exceptions) and bind E3 ids to orders, and each starts from the registry as imported.
  let harness: PlatformHarness;
  const operator = `Bearer ${ADMIN_TOKEN}`;
  const hostappAuth = basicAuthorization(HOSTAPP.id, HOSTAPP.secret);
  const miniappAuth = basicAuthorization(MINIAPP.id, MINIAPP.secret);
  const hostappPath = `/api/v1/dashboard/hostapps/${HOSTAPP.id}`;
  const miniappPath = `/api/v1/dashboard/miniapps/${MINIAPP.id}`;
  /** A name that passes registration and resolves to loopback when called. */
  const inside = (url: string) => url.replace('127.0.0.1', 'svc.partner.test');

  beforeEach(async () => {
    harness = new PlatformHarness();
    harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_inside_1' }).on('/events', { internal_secret: 'hostapp-42' });
    harness.miniapp.on('/complete-order', { code: 'SUCCESS' }).on('/events', { internal_secret: 'miniapp-42' });
    await harness.start({ backend: backend.name });
  }, 120_000);
  afterEach(() => harness.stop(), 60_000);
  beforeEach(() => void names.set('svc.partner.test', () => [v4('127.0.0.1')]));

  const setUrls = async (kind: 'hostapp' | 'miniapp', urls: Record<string, string>, authorization: string) => {
    const answer = await harness.call(
      kind === 'hostapp' ? 'updateHostapp' : 'updateMiniapp',
      { urls },
      {
        authorization,
        path: kind === 'hostapp' ? hostappPath : miniappPath,
      },
    );
    expect(answer.status, answer.text).toBe(200);
    return answer.body;
  };

  test('the operator’s loopback registrations are recorded as the exception, and calls to them work', async () => {
    const hostapp = await harness.call('getHostapp', undefined, { authorization: operator, path: hostappPath });
    expect(hostapp.body.internal_urls).toEqual(['create_order_payment', 'events', 'get_payment_status']);
    const e1 = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(e1.body).toEqual({ order_payment_id: 'hop_inside_1' });
  });

  test('E6: the miniapp’s own name leading to loopback is refused; last_error says so, open port or closed alike', async () => {
    const miniapp = await setUrls('miniapp', { complete_order: inside(`${harness.miniapp.url}/complete-order`) }, miniappAuth);
    // Only the URL the miniapp changed left the operator's exception.
    expect(miniapp.internal_urls).toEqual(['events']);
    const before = harness.miniapp.receivedAt('/complete-order').length;
    harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_inside_2' });
    const e1 = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(e1.status).toBe(200);
    const completion = {
      app_id: MINIAPP.id,
      client_id: HOSTAPP.id,
      order_payment_id: e1.body.order_payment_id,
      payment_status: 'paid',
    };
    expect((await harness.call('completeOrder', completion, { authorization: harness.hostappBasic() })).status).toBe(200);
    const [delivery] = await harness.eventually('the E6 attempt', async () => {
      const list = await harness.call('listDeliveries', undefined, {
        authorization: operator,
        path: `/api/v1/admin/deliveries?limit=5`,
      });
      const attempted = list.body.deliveries.filter((d: { attempts_made: number }) => d.attempts_made > 0);
      return attempted.length > 0 && attempted;
    });
    expect(delivery.last_error).toBe(REFUSED_BY_POLICY);
    expect(harness.miniapp.receivedAt('/complete-order').length).toBe(before);

    // The same with nothing listening on the port: the record reads the same.
    await setUrls('miniapp', { complete_order: 'http://svc.partner.test:9/complete-order' }, miniappAuth);
    const redelivered = await harness.call('redeliverDelivery', undefined, {
      authorization: operator,
      path: `/api/v1/admin/deliveries/${delivery.delivery_id}/redeliver`,
    });
    expect(redelivered.status).toBe(200);
    const again = await harness.eventually('the second E6 attempt', async () => {
      const detail = await harness.call('getDelivery', undefined, {
        authorization: operator,
        path: `/api/v1/admin/deliveries/${delivery.delivery_id}`,
      });
      return detail.body.attempts.length >= 2 && detail.body;
    });
    expect(again.attempts.map((attempt: { error: string }) => attempt.error)).toEqual([REFUSED_BY_POLICY, REFUSED_BY_POLICY]);
    await setUrls('miniapp', { complete_order: `${harness.miniapp.url}/complete-order` }, operator);
  });

  test('E7 to a miniapp: the event bridge never reads an internal service’s answer back', async () => {
    await setUrls('miniapp', { events: inside(`${harness.miniapp.url}/events`) }, miniappAuth);
    const before = harness.miniapp.receivedAt('/events').length;
    const event = { app_id: MINIAPP.id, client_id: HOSTAPP.id, event_type: 'user_profile_updated', payload: {} };
    const answer = await harness.call('sendHostappEvent', event, { authorization: harness.hostappToken() });
    expect(answer.status).toBe(502);
    expect(answer.body.error_code).toBe('EVENT_DELIVERY_FAILED');
    expect(answer.body.error_message).toContain(REFUSED_BY_POLICY);
    expect(answer.text).not.toContain('miniapp-42');
    expect(harness.miniapp.receivedAt('/events').length).toBe(before);
  });

  test('E3, E4 and E7 to a host app: refused by policy, nothing sent', async () => {
    const sent = () => harness.hostapp.received.length;
    // E4 needs a payment in process, made while E3 still goes to the operator's URL.
    harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_inside_3' });
    const e1 = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect(e1.status).toBe(200);
    await setUrls(
      'hostapp',
      {
        create_order_payment: inside(`${harness.hostapp.url}/create-order-payment`),
        get_payment_status: inside(`${harness.hostapp.url}/get-payment-status`),
        events: inside(`${harness.hostapp.url}/events`),
      },
      hostappAuth,
    );
    const hostapp = await harness.call('getHostapp', undefined, { authorization: operator, path: hostappPath });
    expect(hostapp.body.internal_urls).toBeUndefined();
    const before = sent();
    const e3 = await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() });
    expect([e3.body.error_code, e3.body.error_message]).toEqual(['HOSTAPP_UNAVAILABLE', expect.stringContaining(REFUSED_BY_POLICY)]);
    const e2 = await harness.call(
      'getPaymentStatus',
      { app_id: MINIAPP.id, client_id: HOSTAPP.id, order_payment_id: e1.body.order_payment_id },
      { authorization: harness.miniappAuth() },
    );
    expect([e2.body.error_code, e2.body.error_message]).toEqual(['HOSTAPP_UNAVAILABLE', expect.stringContaining(REFUSED_BY_POLICY)]);
    const event = {
      app_id: MINIAPP.id,
      client_id: HOSTAPP.id,
      event_type: 'order_status_update',
      payload: { order_payment_id: 'hop_inside_1', fulfillment_status: 'shipped' },
    };
    const e7 = await harness.call('sendMiniappEvent', event, { authorization: harness.miniappAuth() });
    expect([e7.status, e7.body.error_message]).toEqual([502, expect.stringContaining(REFUSED_BY_POLICY)]);
    expect(e7.text).not.toContain('hostapp-42');
    expect(sent()).toBe(before);
  });

  test('an operator setting the URL back to loopback restores the exception for that URL only', async () => {
    // The host app moves every URL to its name leading inside: no exception is left.
    const moved = await setUrls(
      'hostapp',
      {
        create_order_payment: inside(`${harness.hostapp.url}/create-order-payment`),
        get_payment_status: inside(`${harness.hostapp.url}/get-payment-status`),
        events: inside(`${harness.hostapp.url}/events`),
      },
      hostappAuth,
    );
    expect(moved.internal_urls).toBeUndefined();
    const body = await setUrls('hostapp', { create_order_payment: `${harness.hostapp.url}/create-order-payment` }, operator);
    expect(body.internal_urls).toEqual(['create_order_payment']);
    harness.hostapp.on('/create-order-payment', { order_payment_id: 'hop_inside_4' });
    expect((await harness.call('createOrderPayment', e1Body(), { authorization: harness.miniappAuth() })).status).toBe(200);
  });

  test('registration refuses a host written with a final dot (localhost.)', async () => {
    const answer = await harness.call(
      'updateMiniapp',
      { urls: { events: 'http://localhost.:8082/events' } },
      { authorization: miniappAuth, path: miniappPath },
    );
    expect([answer.status, answer.body.error_code]).toEqual([400, 'INVALID_REQUEST']);
  });
});
