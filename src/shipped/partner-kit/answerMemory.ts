import type { AnswerStore } from './types.js';

/** How many event ids the in-memory store keeps: enough for days of callbacks of a small partner. */
export const MEMORY_ANSWER_LIMIT = 10_000;

/** The default AnswerStore: the most recent answers, oldest forgotten first. */
export class MemoryAnswerStore implements AnswerStore {
  private readonly answers = new Map<string, string>();

  constructor(private readonly limit = MEMORY_ANSWER_LIMIT) {}

  get(key: string): string | undefined {
    return this.answers.get(key);
  }

  set(key: string, answer: string): void {
    this.answers.set(key, answer);
    if (this.answers.size > this.limit) {
      const oldest = this.answers.keys().next().value;
      if (oldest !== undefined) this.answers.delete(oldest);
    }
  }
}

/** The store an `idempotency` option asks for; undefined for 'off'. */
export function answerStoreFor(option: 'memory' | 'off' | AnswerStore | undefined): AnswerStore | undefined {
  if (option === 'off') return undefined;
  if (option === undefined || option === 'memory') return new MemoryAnswerStore();
  return option;
}
