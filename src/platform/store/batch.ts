/**
 * The one way the store batches writes (ADR 0021, 0031, 0033): concurrent requests' statements of
 * one kind go out as one statement. Every item waits for the statement that carries it, so a
 * caller still learns only after its row is committed. Items that arrive while `maxInFlight`
 * statements run wait and go together in the next one, so under load one statement (one round
 * trip, one commit, one backend wake-up) serves many requests, and alone an item goes out at
 * once, or, with `gatherTurn`, when the event loop's current turn of I/O has been handled (a
 * setImmediate, no timer): answers that arrive together then go together even into an idle
 * batcher.
 *
 * When a batch statement fails (one bad item fails the whole statement), each of its items is
 * retried on its own, one after another, so an item fails only for its own fault.
 */
export interface BatchOptions {
  /** Statements running at once; more items queue for the next batch. */
  maxInFlight: number;
  /** Most items in one statement. */
  maxBatch: number;
  /** Gather the items of the current event-loop turn before the first statement goes out. */
  gatherTurn?: boolean;
}

/** `run` answers a batch with one result per item, in order. */
export function batched<I, O>(run: (items: I[]) => Promise<O[]>, options: BatchOptions): (item: I) => Promise<O> {
  interface Waiting {
    item: I;
    resolve(value: O): void;
    reject(error: unknown): void;
  }
  const queue: Waiting[] = [];
  let inFlight = 0;
  let gathering = false;

  async function runBatch(batch: Waiting[]): Promise<void> {
    try {
      const results = await run(batch.map((waiting) => waiting.item));
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} answered ${results.length} results`);
      batch.forEach((waiting, index) => waiting.resolve(results[index]!));
    } catch (error) {
      if (batch.length === 1) batch[0]!.reject(error);
      // One after another, so the retries of a failed batch keep to the batcher's one statement in
      // flight: a batch failing because the database is in trouble must not become a burst of
      // one statement per item on the pool.
      else for (const waiting of batch) await runBatch([waiting]);
    }
  }

  function pump(): void {
    while (inFlight < options.maxInFlight && queue.length > 0) {
      const batch = queue.splice(0, options.maxBatch);
      inFlight++;
      void runBatch(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!options.gatherTurn || inFlight > 0) return pump();
      if (gathering) return;
      gathering = true;
      setImmediate(() => {
        gathering = false;
        pump();
      });
    });
}

/**
 * E1's two writes (the key reservation, the record) batched per store: one statement at a time
 * each, and everything that arrived while it ran goes in the next (ADR 0031). A write waits for
 * at most one statement ahead of it.
 */
export const e1WriteBatching: BatchOptions = { maxInFlight: 1, maxBatch: 128 };

/**
 * Runs a batch's items through `round` in rounds where no two items share a key (a statement may
 * touch a row once), and sends an item again when its round answers undefined for it (it could
 * not be decided there: a row committed after the statement's snapshot). Usually one round.
 */
export async function inRounds<I, O>(
  items: readonly I[],
  keysOf: (item: I) => readonly string[],
  round: (items: I[]) => Promise<Array<O | undefined>>,
  maxRounds = 10,
): Promise<O[]> {
  const results: Array<O | undefined> = new Array(items.length);
  let pending = items.map((item, index) => ({ item, index }));
  for (let count = 0; pending.length > 0; count++) {
    if (count === maxRounds) throw new Error(`a batch item was still undecided after ${maxRounds} rounds`);
    const seen = new Set<string>();
    const distinct = pending.filter(({ item }) => {
      const keys = keysOf(item);
      if (keys.some((key) => seen.has(key))) return false;
      for (const key of keys) seen.add(key);
      return true;
    });
    const answers = await round(distinct.map(({ item }) => item));
    distinct.forEach(({ index }, position) => (results[index] = answers[position]));
    pending = pending.filter(({ index }) => results[index] === undefined);
  }
  return results as O[];
}
