import { afterEach, describe, expect, it } from 'vitest';
import { WAITING_EVENT_TYPE } from '../../generated/sdk/bridge-conformance-contract.js';
import { runConformance, type ConformanceWire } from '../../src/shipped/bridge-conformance/driver.js';
import { payFindings } from '../../src/shipped/bridge-conformance/judge.js';
import type { Report } from '../../src/shipped/bridge-conformance/vectors.js';
import {
  BRIDGE_PROTOCOL,
  BRIDGE_PROTOCOL_VERSION,
  createHostBridge,
  createMinibridgeSdk,
  miniappFrameEndpoint,
  MinibridgeWebAppCustomEvent,
  validateMessage,
  type MessageEventLike,
  type MinibridgeSdk,
} from '../../src/shipped/sdk/index.js';
import { BROKEN_HOSTS, startHarnessHost, type HostVariant } from '../support/bridgeHosts.js';
import { vectors } from '../support/bridgeVectors.js';
import { framePair } from './fakeWindows.js';

// The conformance page's runner against the project's web host bridge over fake windows (the
// page's iframe transport): it passes the good host, and each broken host fails its own check and
// no other. The same runs in Chromium with the real page (test/browser/bridgeConformance.test.ts).

const MINIAPP_ORIGIN = 'https://miniapp.example';
/** Bounds for hosts that keep someone waiting; a good host never reaches them. */
const SHORT_WAIT_MS = 1_000;
const LONG_WAIT_MS = 20_000;

let sdk: MinibridgeSdk | undefined;
let host: { close(): void } | undefined;

afterEach(() => {
  sdk?.close();
  host?.close();
});

async function runAgainst(variant: HostVariant, waitMs = LONG_WAIT_MS): Promise<Report> {
  const pair = framePair('https://host.example', MINIAPP_ORIGIN);
  host = startHarnessHost({
    createHostBridge,
    validateMessage,
    endpoint: miniappFrameEndpoint(pair.host, () => pair.frame, MINIAPP_ORIGIN),
    variant,
    protocol: BRIDGE_PROTOCOL,
    version: BRIDGE_PROTOCOL_VERSION,
    customEventName: MinibridgeWebAppCustomEvent,
    waitingEventType: WAITING_EVENT_TYPE,
  });
  sdk = createMinibridgeSdk({ window: pair.miniapp });
  const wire: ConformanceWire = {
    transport: 'iframe',
    carries: 'value',
    send: (data) => pair.miniapp.parent!.postMessage(data, '*'),
    listen: (receive) => {
      const listener = (event: MessageEventLike) => {
        if (event.source === pair.miniapp.parent) receive(event.data);
      };
      pair.miniapp.addEventListener('message', listener);
      return () => pair.miniapp.removeEventListener('message', listener);
    },
  };
  const subscriber = sdk;
  return runConformance({
    vectors,
    wire,
    run: `node-${variant}`,
    userWaitMs: waitMs,
    answerWaitMs: waitMs,
    subscribe: (callback) => subscriber.subscribe((event) => callback(event.detail)),
  });
}

function outcomes(report: Report): Record<string, string> {
  return Object.fromEntries(report.checks.map((check) => [check.rule, check.outcome]));
}

const failing = (report: Report) => report.checks.filter((check) => check.outcome === 'fail').map((check) => check.rule);

describe('the conformance runner on the iframe transport', () => {
  it('passes the project web host bridge on every rule, judging at least one vector each', async () => {
    const report = await runAgainst('good');
    expect(report.checks.map((check) => check.rule)).toEqual(vectors.rules.map((rule) => rule.id));
    expect(
      report.checks.filter((check) => check.outcome !== 'pass'),
      JSON.stringify(report.checks, null, 1),
    ).toEqual([]);
    expect(report).toMatchObject({ finished: true, passed: true, page: { transport: 'iframe', answersAs: 'object' } });
    for (const check of report.checks) expect(check.vectors, check.rule).toBeGreaterThan(0);
    // The vectors only text can carry are named, not silently dropped.
    expect(report.checks.find((check) => check.rule === 'pay-data-unchanged')?.note).toMatch(/pay-exact-number-text/);
  });

  it.each(Object.entries(BROKEN_HOSTS))('the %s host fails %s and nothing else', async (variant, rule) => {
    // Hosts that keep the page waiting are waited for briefly; every other check is judged without waiting.
    const report = await runAgainst(variant as HostVariant, SHORT_WAIT_MS);
    expect(
      failing(report),
      JSON.stringify(
        report.checks.filter((check) => check.outcome === 'fail'),
        null,
        1,
      ),
    ).toEqual([rule]);
    expect(report.passed).toBe(false);
    const check = report.checks.find((item) => item.rule === rule)!;
    expect(check.failures.length).toBeGreaterThan(0);
    for (const failure of check.failures) expect(failure.reason).toMatch(/\S/);
  });

  it('reports pay-status, pay-data-unchanged and pay-answered-once as not judged when no pay_result ever arrives', async () => {
    const report = await runAgainst('never-answers', SHORT_WAIT_MS);
    expect(outcomes(report)).toMatchObject({
      'pay-answered': 'fail',
      'pay-status': 'skip',
      'pay-data-unchanged': 'skip',
      'pay-answered-once': 'skip',
      'pay-in-progress': 'pass',
    });
    expect(report.checks.find((check) => check.rule === 'pay-answered')!.failures[0]!.reason).toMatch(/no answer within 1 s/);
  });

  it('names the digits a rounding host changed', async () => {
    const report = await runAgainst('rounds-amount', SHORT_WAIT_MS);
    const reasons = report.checks.find((check) => check.rule === 'pay-data-unchanged')!.failures.map((failure) => failure.reason);
    expect(reasons).toContain('paymentData.amount is the number 125001, not the string "125000.50"');
  });
});

describe('the judge of a pay_result', () => {
  const paymentData = { amount: '10', currency: 'VND', orderPaymentId: 'hop_j' };
  const expected = { type: 'pay_result', replyTo: 'p-j', paymentData: { ...paymentData, status: 'success' } } as never;
  const answer = (extra: Record<string, unknown> = {}) => ({
    protocol: BRIDGE_PROTOCOL,
    version: BRIDGE_PROTOCOL_VERSION,
    id: 'host-1',
    type: 'pay_result',
    replyTo: 'p-j',
    paymentData: { ...paymentData, status: 'success' },
    ...extra,
  });
  const options = { vectors, relaxHostChosen: false, numbers: 'text' } as const;

  it('charges a member PayResult does not have to pay-answered, and nothing else', () => {
    expect(payFindings(expected, [answer()], options).findings).toEqual([]);
    expect(payFindings(expected, [answer({ tip: '1' })], options).findings).toEqual([
      { rule: 'pay-answered', reason: 'the pay_result has a member the schema does not know: tip' },
    ]);
  });
});
