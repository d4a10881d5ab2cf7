// Contract fuzzing of createOrderPayment: see support/fuzzRun.ts (FUZZ_SEED, FUZZ_RUNS).
import { fuzzOperation } from './support/fuzzRun.js';

fuzzOperation('createOrderPayment', 'valid orders reach E3 once each, nothing else does');
