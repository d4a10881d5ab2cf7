import express from 'express';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { verify as verifyNow } from '../../src/shipped/conformance/index.js';
import { BROKEN_SERVERS } from './broken/index.js';
import { KNOWN_HOSTAPP, KNOWN_MINIAPP, refusesUnknownHostapp, refusesUnknownMiniapp } from './broken/refusesUnknownPartner.js';
import { HOSTAPP, MINIAPP, referenceHostappRouter, referenceMiniappRouter, serve, type RunningServer } from './reference.js';
import { failing } from './verdicts.js';

function settings(subject: 'hostapp' | 'miniapp', url: string, signingSecrets: string[] = []) {
  return {
    subject,
    url,
    credentials: subject === 'hostapp' ? HOSTAPP : MINIAPP,
    tokenPrefix: 'Token',
    signingSecrets,
    paths: {},
    e4Method: 'POST' as const,
  };
}

// Every test side by side: each has servers of its own (the first two share stateless reference
// servers), and a host app run spends most of its time in the expiry check's wait for its payment
// to expire (runner.ts), not on the processor. At most three runs at once, though: the kit and the
// servers it judges share this process, and a run prepares an operation's cases in one
// synchronous stretch. With every run going at once on a loaded machine, an answer waited behind
// the others' stretches past the contract's time-out (5 s for E4, 10 s for E3) and the kit rightly
// reported the server as failing: with 27 at once in two of three full runs, with six in one.
// A test's time-out counts its wait for a turn.
const runs = pLimit(3);
const verify = (options: Parameters<typeof verifyNow>[0]) => runs(() => verifyNow(options));

describe.concurrent('the conformance kit', () => {
  describe.concurrent('against correct servers', { timeout: 600_000 }, () => {
    let hostapp: RunningServer;
    let miniapp: RunningServer;
    beforeAll(async () => {
      hostapp = await serve(express().use(referenceHostappRouter()));
      miniapp = await serve(express().use(referenceMiniappRouter()));
    });
    afterAll(async () => {
      await hostapp.close();
      await miniapp.close();
    });

    it('passes the reference host app server, with every check run on every operation', async ({ expect }) => {
      const report = await verify(settings('hostapp', hostapp.url));
      expect(failing(report)).toEqual([]);
      const ran = report.results.filter((result) => result.outcome === 'pass').map((result) => `${result.check} ${result.operationId}`);
      for (const check of ['status', 'content-type', 'schema', 'positive', 'negative', 'auth']) {
        for (const operationId of ['createHostappOrderPayment', 'getHostappPaymentStatus', 'receiveHostappEvent'])
          expect(ran).toContain(`${check} ${operationId}`);
      }
      expect(ran).toContain('idempotency receiveHostappEvent');
      expect(ran).toContain('expiry getHostappPaymentStatus');
    });

    it('passes the reference miniapp server, duplicate deliveries included', async ({ expect }) => {
      const report = await verify(settings('miniapp', miniapp.url));
      expect(failing(report)).toEqual([]);
      expect(
        report.results.find((result) => result.check === 'idempotency' && result.operationId === 'receiveOrderCompletion')?.outcome,
      ).toBe('pass');
    });

    it('passes a host app serving E4 by GET at registered paths, with signed requests', async ({ expect }) => {
      const secrets = ['conformance-signing-secret'];
      const server = await serve(
        express().use(
          referenceHostappRouter({
            signingSecrets: secrets,
            paths: { createOrderPayment: '/pay', getPaymentStatus: '/status', events: '/hooks/events' },
          }),
        ),
      );
      try {
        const report = await verify({
          ...settings('hostapp', server.url, secrets),
          e4Method: 'GET',
          paths: { e3: '/pay', e4: '/status', e7: '/hooks/events' },
        });
        expect(failing(report)).toEqual([]);
        expect(
          report.results.some(
            (result) => result.operationId === 'queryHostappPaymentStatus' && result.check === 'negative' && result.outcome === 'pass',
          ),
        ).toBe(true);
        // Signed requests: a stale timestamp and a replayed signature are tried on every operation, and refused.
        for (const check of ['stale-timestamp', 'replay'])
          for (const operationId of ['createHostappOrderPayment', 'queryHostappPaymentStatus', 'receiveHostappEvent'])
            expect(report.results.find((result) => result.check === check && result.operationId === operationId)?.outcome).toBe('pass');
      } finally {
        await server.close();
      }
    });
  });

  describe.concurrent('a server that knows only its own partners', { timeout: 600_000 }, () => {
    it('passes with --app-id / --client-id naming them (without, the kit stops with one hint: broken/refusesUnknownPartner.ts)', async ({
      expect,
    }) => {
      const hostapp = await serve(refusesUnknownMiniapp().app);
      const miniapp = await serve(refusesUnknownHostapp().app);
      try {
        expect(failing(await verify({ ...settings('hostapp', hostapp.url), appId: KNOWN_MINIAPP }))).toEqual([]);
        expect(failing(await verify({ ...settings('miniapp', miniapp.url), clientId: KNOWN_HOSTAPP }))).toEqual([]);
      } finally {
        await hostapp.close();
        await miniapp.close();
      }
    });

    it('without signing, the stale-timestamp and replay checks are skipped and say why', async ({ expect }) => {
      const server = await serve(express().use(referenceMiniappRouter()));
      try {
        const report = await verify(settings('miniapp', server.url));
        for (const check of ['stale-timestamp', 'replay'])
          expect(report.results.find((result) => result.check === check)).toMatchObject({
            outcome: 'skip',
            note: 'requests are not signed (no --signing-secret)',
          });
      } finally {
        await server.close();
      }
    });
  });

  describe.concurrent('fixtures (--set) for a server that only knows its own orders', { timeout: 600_000 }, () => {
    it('passes with the known order pinned, and reports the refusals without it', async ({ expect }) => {
      const strict = await serve(
        express().use(
          referenceMiniappRouter({
            handlers: {
              receiveOrderCompletion: (body) =>
                body.hostapp_order_payment_id === 'hop_known' ? { code: 'SUCCESS' } : { error_code: 'ORDER_NOT_FOUND' },
              receiveEvent: () => ({ received: true }),
            },
          }),
        ),
      );
      try {
        const pinned = await verify({
          ...settings('miniapp', strict.url),
          fixtures: [{ path: ['hostapp_order_payment_id'], value: 'hop_known' }],
        });
        expect(failing(pinned)).toEqual([]);
        const unpinned = await verify(settings('miniapp', strict.url));
        expect(failing(unpinned)).toEqual(['idempotency receiveOrderCompletion', 'positive receiveOrderCompletion']);
      } finally {
        await strict.close();
      }
    });
  });

  describe.concurrent('against broken servers', { timeout: 600_000 }, () => {
    for (const make of BROKEN_SERVERS) {
      const broken = make();
      it(`catches "${broken.name}" with exactly ${broken.stops ? 'one stop message' : broken.catches.join(', ')}`, async ({ expect }) => {
        const server = await serve(broken.app);
        try {
          const report = await verify(settings(broken.subject, server.url, broken.signingSecrets));
          expect(failing(report)).toEqual([...broken.catches].sort());
          if (broken.stops) {
            expect(report.stopped).toMatch(broken.stops);
            expect(report.results).toEqual([]);
          } else {
            expect(report.stopped).toBeUndefined();
          }
          expect(report.passed).toBe(false);
        } finally {
          await server.close();
        }
      });
    }
  });

  describe.concurrent('when there is nothing to check', { timeout: 600_000 }, () => {
    it('stops with one message naming the address when the target cannot be reached', async ({ expect }) => {
      const closed = await serve(express());
      const url = closed.url;
      await closed.close();
      const report = await verify(settings('hostapp', url));
      expect(report.passed).toBe(false);
      expect(report.results).toEqual([]);
      expect(report.stopped).toMatch(
        new RegExp(
          `^cannot reach ${url}/create-order-payment \\(E3 createHostappOrderPayment\\): request failed: .*ECONNREFUSED.*\\.\\nNothing was checked\\. Start the server, or fix --url\\.$`,
        ),
      );
    });

    it('never reports a check as passed for an operation that gave no answer', async ({ expect }) => {
      const hangsUpOnEvents = express()
        .use('/events', (req) => req.socket.destroy())
        .use(referenceHostappRouter());
      const server = await serve(hangsUpOnEvents);
      try {
        const report = await verify(settings('hostapp', server.url));
        const e7 = report.results.filter((result) => result.operationId === 'receiveHostappEvent');
        expect(e7.filter((result) => result.outcome === 'pass')).toEqual([]);
        for (const check of ['content-type', 'schema']) {
          expect(e7.find((result) => result.check === check)).toMatchObject({ outcome: 'skip', requests: 0, note: 'no answer to check' });
        }
        expect(failing(report)).toEqual([
          'auth receiveHostappEvent',
          'idempotency receiveHostappEvent',
          'negative receiveHostappEvent',
          'positive receiveHostappEvent',
          'status receiveHostappEvent',
        ]);
      } finally {
        await server.close();
      }
    });
  });
});
