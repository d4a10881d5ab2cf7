/**
 * A partner's registered URL is parsed once per text, for both of its uses on every call: its
 * reach (`reachOf`, from the host's class) and where the call goes (`callPartner`'s target), one
 * bounded cache for both (partnerUrl.ts, ADR 0045). The texts come from partners, so no number
 * of distinct texts may grow it past its bound. Connections are still checked as they open
 * (partnerAddresses.test.ts): this is only what a text says by itself.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { callPartner, type PartnerCallMeter } from '../../../src/platform/outbound/partnerCall.js';
import { MAX_REMEMBERED_URLS, partnerUrl, reachOf, rememberedUrls } from '../../../src/platform/outbound/partnerUrl.js';
import { FakePartner } from '../../support/fakePartners.js';

const meter = { partnerCalls: { inc: () => {} }, partnerCallSeconds: { observe: () => {} } } as unknown as PartnerCallMeter;
const approved = new Set(['create_order_payment']);
const loopbackOnly = { sandboxLoopback: false };

/** One E3 to `url`, reached as `reachOf` decides: both uses of the text, in the call's own order. */
function e3(url: string) {
  return callPartner(
    'createHostappOrderPayment',
    {
      url,
      reach: reachOf(approved, 'create_order_payment', url, loopbackOnly),
      authorization: 'Basic eDp5',
      signingSecrets: [],
      headers: {},
      body: '{}' as never,
    },
    meter,
  );
}

// The bound's test runs last: it leaves the cache full, and the tests before it count entries.
describe('one parse per URL text, for the reach and the target', () => {
  const partner = new FakePartner();
  beforeAll(async () => {
    partner.on('/one/create-order-payment', { order_payment_id: 'hop_one_1' });
    await partner.start();
  });
  afterAll(() => partner.stop());

  test('the reach and the call read the same one entry, whichever asks first', async () => {
    const reachFirst = `${partner.url}/one/create-order-payment?first=reach`;
    const before = rememberedUrls();
    expect(reachOf(approved, 'create_order_payment', reachFirst, loopbackOnly)).toBe('operator-approved');
    expect(rememberedUrls()).toBe(before + 1);
    const entry = partnerUrl(reachFirst);
    expect((await e3(reachFirst)).ok).toBe(true);
    // The call added nothing: its target is the entry the reach was decided from.
    expect(rememberedUrls()).toBe(before + 1);
    expect(partnerUrl(reachFirst)).toBe(entry);

    // A text the call's target is asked of before anything else asks its reach.
    const callFirst = `${partner.url}/one/create-order-payment?first=call`;
    const target = { origin: partner.url, pathname: '/one/create-order-payment', search: '?first=call' };
    const call = callPartner(
      'createHostappOrderPayment',
      { url: callFirst, reach: 'operator-approved', authorization: 'Basic eDp5', signingSecrets: [], headers: {}, body: '{}' as never },
      meter,
    );
    expect(rememberedUrls()).toBe(before + 2);
    expect((await call).ok).toBe(true);
    expect(reachOf(approved, 'create_order_payment', callFirst, loopbackOnly)).toBe('operator-approved');
    expect(rememberedUrls()).toBe(before + 2);
    expect(partnerUrl(callFirst)).toEqual({ target, internal: true, loopback: true });

    expect(partner.receivedAt('/one/create-order-payment').map((request) => request.method)).toEqual(['POST', 'POST']);
  });

  test.each([
    ['https://partner.example/e3?k=1#part', 'https://partner.example', '/e3', '?k=1', false, false],
    ['HTTP://LOCALHOST.:8080/e3', 'http://localhost.:8080', '/e3', '', true, true],
    ['http://0x7f.1/e3', 'http://127.0.0.1', '/e3', '', true, true],
    ['http://[::ffff:10.0.0.5]/e3', 'http://[::ffff:a00:5]', '/e3', '', true, false],
    ['https://printer.local/e3', 'https://printer.local', '/e3', '', true, false],
  ])('%s: the target and the host class come from one reading of the text', (text, origin, pathname, search, internal, loopback) => {
    const entry = partnerUrl(text);
    expect(entry).toEqual({ target: { origin, pathname, search }, internal, loopback });
    expect(Object.isFrozen(entry) && Object.isFrozen(entry!.target)).toBe(true);
    expect(partnerUrl(text)).toBe(entry);
    expect(reachOf(new Set(['create_order_payment']), 'create_order_payment', text, { sandboxLoopback: true })).toBe(
      internal ? 'operator-approved' : 'public',
    );
  });

  test('a text that is no URL is remembered as none: reached as public, and never called', async () => {
    const before = rememberedUrls();
    const calls = partner.received.length;
    for (const text of ['http://[/', 'not a url', '']) {
      expect(partnerUrl(text)).toBeUndefined();
      expect(reachOf(approved, 'create_order_payment', text, { sandboxLoopback: true })).toBe('public');
      await expect(e3(text)).rejects.toThrow('the URL registered for createHostappOrderPayment is not a URL');
    }
    // Each parsed once, by the first use; the other two found the failure remembered.
    expect(rememberedUrls()).toBe(before + 3);
    expect(partner.received).toHaveLength(calls);
  });
});

describe('the bound', () => {
  test('more distinct texts than the bound, parsable or not, never hold more than the bound', () => {
    let most = 0;
    for (let index = 0; index < 2 * MAX_REMEMBERED_URLS + 7; index++) {
      const text = index % 3 === 0 ? `http://[${index}/` : `https://partner-${index}.example/e3?n=${index}`;
      partnerUrl(text);
      most = Math.max(most, rememberedUrls());
    }
    expect(most).toBe(MAX_REMEMBERED_URLS);
    // What was let go is worked out again, the same.
    expect(partnerUrl('https://partner-1.example/e3?n=1')).toEqual({
      target: { origin: 'https://partner-1.example', pathname: '/e3', search: '?n=1' },
      internal: false,
      loopback: false,
    });
    expect(partnerUrl('http://[0/')).toBeUndefined();
  });
});
