import { wallClockMs } from './fakes/miniapp.js';
import { E1_PATH, E5_PATH, e1Body, e5Body, hostappHeaders, miniappHeadersOf, parties } from './scenario.js';

/** Runs `task` for 0..count-1 with at most `concurrency` in flight. */
export async function pool(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** Creates `count` order payments through E1 from miniapp `appId`; returns their order_payment_ids. */
export async function createOrders(
  platformUrl: string,
  count: number,
  concurrency: number,
  tag: string,
  appId = parties.appId,
): Promise<string[]> {
  const ids: string[] = new Array(count);
  await pool(count, concurrency, async (index) => {
    const response = await fetch(platformUrl + E1_PATH, {
      method: 'POST',
      headers: miniappHeadersOf(appId),
      body: e1Body(`${tag}-${index}`, appId),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`E1 answered ${response.status}: ${text}`);
    ids[index] = (JSON.parse(text) as { order_payment_id: string }).order_payment_id;
  });
  return ids;
}

/** Marks each order payment paid through E5; returns when each E5 was answered (wallClockMs, the fake miniapp's clock). */
export async function completeOrders(
  platformUrl: string,
  ids: readonly string[],
  concurrency: number,
  appId = parties.appId,
): Promise<Map<string, number>> {
  const answeredAt = new Map<string, number>();
  await pool(ids.length, concurrency, async (index) => {
    const id = ids[index]!;
    const response = await fetch(platformUrl + E5_PATH, { method: 'POST', headers: hostappHeaders, body: e5Body(id, appId) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`E5 answered ${response.status}: ${text}`);
    answeredAt.set(id, wallClockMs());
  });
  return answeredAt;
}

/** Resolves once `condition` (which may ask another process) holds, polled every 20 ms; rejects after `timeoutMs`. */
export async function waitUntilAsync(condition: () => Promise<boolean>, timeoutMs: number, what = 'a condition'): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
