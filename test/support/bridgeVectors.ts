import { readFileSync } from 'node:fs';
import path from 'node:path';
import { answerMismatch, jsonDifference } from '../../src/shipped/bridge-conformance/judge.js';
import {
  actionOf,
  answersOf,
  deliveriesOf,
  readableId,
  readVectors,
  toValue,
  type Vector,
  type Vectors,
} from '../../src/shipped/bridge-conformance/vectors.js';
import { createHostBridge, miniappFrameEndpoint, type PaymentResultStatus } from '../../src/shipped/sdk/index.js';
import { flush, framePair } from '../sdk/fakeWindows.js';
import { repoRoot } from '../../scripts/lib/paths.js';

/** openapi/bridge.vectors.json, read without losing digits. */
export const vectorsPath = path.join(repoRoot, 'openapi', 'bridge.vectors.json');
export const vectorsText = readFileSync(vectorsPath, 'utf8');
export const vectors: Vectors = readVectors(vectorsText);

const MINIAPP_ORIGIN = 'https://miniapp.example';

/**
 * Runs one vector against the project's web host bridge (createHostBridge) over fake windows,
 * scripting the host app as the vector says (the person's choice on the sheet, the custom event
 * handler's answer, the event the host sends), and judges exactly: after each step, what the host
 * posted and what its handlers were handed. Returns the problems found ([] when it conforms).
 */
export async function runOnWebHost(vector: Vector): Promise<string[]> {
  const pair = framePair('https://host.example', MINIAPP_ORIGIN);
  const handed: unknown[] = [];
  const sheets = new Map<string, (status: PaymentResultStatus) => void>();
  const events = new Map<string, { resolve(value: unknown): void; reject(error: Error): void }>();
  let receiving: string | undefined;
  const host = createHostBridge({
    endpoint: miniappFrameEndpoint(pair.host, () => pair.frame, MINIAPP_ORIGIN),
    onPay: (paymentData) => {
      handed.push({ payment: paymentData });
      return new Promise((resolve) => sheets.set(receiving ?? '', resolve));
    },
    onCustomEvent: (data, context) => {
      handed.push({ customEvent: { data, expectsReply: context.expectsReply } });
      if (!context.expectsReply) return undefined;
      return new Promise((resolve, reject) => events.set(receiving ?? '', { resolve, reject }));
    },
  });
  const problems: string[] = [];
  const hostIds = new Set<string>();
  try {
    for (const [index, step] of vector.steps.entries()) {
      const where = `step ${index + 1}`;
      const postedBefore = pair.toMiniapp.length;
      const handedBefore = handed.length;
      const action = actionOf(step);
      if (action.kind === 'send' || action.kind === 'sendText') {
        receiving = action.kind === 'send' ? readableId(action.value, 100) : undefined;
        pair.miniapp.parent!.postMessage(action.kind === 'send' ? toValue(action.value) : action.text, '*');
      } else if (action.kind === 'finishPayment') {
        const finish = sheets.get(action.request);
        if (!finish) problems.push(`${where}: no payment sheet is open for ${action.request}`);
        else finish(action.status as PaymentResultStatus);
      } else if (action.kind === 'answerCustomEvent') {
        const pending = events.get(action.request);
        if (!pending) problems.push(`${where}: the handler was not handed ${action.request}`);
        else if (action.ok) pending.resolve(action.hasResult ? toValue(action.result) : undefined);
        else if (action.error?.code !== 'REJECTED') problems.push(`${where}: the web host refuses custom events with REJECTED only`);
        else pending.reject(new Error(action.error.message));
      } else {
        host.emit(toValue(action.detail) as never);
      }
      await flush();
      await flush();
      const posted = pair.toMiniapp.slice(postedBefore).map((entry) => entry.message);
      const expected = answersOf(step);
      if (posted.length !== expected.length) problems.push(`${where}: posted ${posted.length} message(s), expected ${expected.length}`);
      expected.forEach((answer, position) => {
        if (posted[position] === undefined) return;
        const mismatch = answerMismatch(answer, posted[position], { vectors, relaxHostChosen: false, numbers: 'text' });
        if (mismatch) problems.push(`${where}, answer ${position + 1}: ${mismatch}`);
      });
      for (const message of posted) {
        const id = (message as { id?: unknown }).id;
        if (typeof id === 'string' && hostIds.has(id)) problems.push(`${where}: the host reused its message id ${id}`);
        if (typeof id === 'string') hostIds.add(id);
      }
      const difference = jsonDifference(deliveriesOf(step), handed.slice(handedBefore), 'text', 'handed');
      if (difference) problems.push(`${where}: what the handlers were handed differs: ${difference}`);
    }
  } finally {
    host.close();
  }
  return problems;
}
