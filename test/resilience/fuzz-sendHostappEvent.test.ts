// Contract fuzzing of sendHostappEvent: see support/fuzzRun.ts (FUZZ_SEED, FUZZ_RUNS).
import { fuzzOperation } from './support/fuzzRun.js';

fuzzOperation('sendHostappEvent', 'only valid events reach the miniapp E7');
