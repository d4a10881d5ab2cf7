// Contract fuzzing of completeOrder: see support/fuzzRun.ts (FUZZ_SEED, FUZZ_RUNS).
import { everyTransitionOnce, fuzzOperation } from './support/fuzzRun.js';

fuzzOperation('completeOrder', 'every transition reaches E6 exactly once, invalid reports change nothing', everyTransitionOnce);
