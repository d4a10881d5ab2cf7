import { recycleMemoryDatabases } from './memoryDatabases.js';

// Runs before every test file (vitest.config.ts); the recycler is installed once per worker.
recycleMemoryDatabases();
