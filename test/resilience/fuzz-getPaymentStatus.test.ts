// Contract fuzzing of getPaymentStatus: see support/fuzzRun.ts (FUZZ_SEED, FUZZ_RUNS).
import { fuzzOperation } from './support/fuzzRun.js';

fuzzOperation('getPaymentStatus', 'only valid queries of known in-process payments reach E4');
