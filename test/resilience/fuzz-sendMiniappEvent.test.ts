// Contract fuzzing of sendMiniappEvent: see support/fuzzRun.ts (FUZZ_SEED, FUZZ_RUNS).
import { fuzzOperation } from './support/fuzzRun.js';

fuzzOperation('sendMiniappEvent', 'only valid events reach the host app E7');
