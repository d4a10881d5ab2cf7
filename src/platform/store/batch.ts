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
 * retried on its own, one after another, so an item fails only for its own fault. A batch that
 * ran in rounds (inRounds) and failed after some rounds committed says so (PartlyDecided): those
 * items keep what their committed round answered, and only the rest are retried. Retried, a
 * committed item would be decided again on a state that already holds its own change, and told
 * "nothing changed" (or the failure) for a change that was made.
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
      const decided = error instanceof PartlyDecided ? (error.results as ReadonlyArray<O | undefined>) : [];
      const undecided = batch.filter((waiting, index) => {
        const result = decided[index];
        if (result === undefined) return true;
        waiting.resolve(result);
        return false;
      });
      if (batch.length === 1) undecided[0]?.reject(error instanceof PartlyDecided ? error.cause : error);
      // One after another, so the retries of a failed batch keep to the batcher's one statement in
      // flight: a batch failing because the database is in trouble must not become a burst of
      // one statement per item on the pool.
      else for (const waiting of undecided) await runBatch([waiting]);
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
 * A batch that failed after some of its items were decided by statements that committed:
 * `results` holds, by the batch's positions, what those items were answered (undefined for the
 * others); `cause` is the failure. `batched` answers the decided items and retries the rest.
 */
export class PartlyDecided extends Error {
  constructor(
    readonly results: ReadonlyArray<unknown>,
    override readonly cause: unknown,
  ) {
    super(`a batch failed after ${results.filter((result) => result !== undefined).length} of its items were decided`, { cause });
  }
}

/**
 * Runs a batch's items through `round` in rounds where no two items share a key (a statement may
 * touch a row once), and sends an item again when its round answers undefined for it (it could
 * not be decided there: a row committed after the statement's snapshot). Usually one round. A
 * round that fails after an earlier one decided items, or items still undecided after
 * `maxRounds`, end the batch with PartlyDecided, so what was committed is answered as such.
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
    const decidedSoFar = pending.length < items.length;
    if (count === maxRounds) {
      const error = new Error(`a batch item was still undecided after ${maxRounds} rounds`);
      throw decidedSoFar ? new PartlyDecided(results, error) : error;
    }
    const seen = new Set<string>();
    const distinct = pending.filter(({ item }) => {
      const keys = keysOf(item);
      if (keys.some((key) => seen.has(key))) return false;
      for (const key of keys) seen.add(key);
      return true;
    });
    let answers: Array<O | undefined>;
    try {
      answers = await round(distinct.map(({ item }) => item));
    } catch (error) {
      throw decidedSoFar ? new PartlyDecided(results, error) : error;
    }
    distinct.forEach(({ index }, position) => (results[index] = answers[position]));
    pending = pending.filter(({ index }) => results[index] === undefined);
  }
  return results as O[];
}
