/** The fake miniapp server (fakes/miniapp.ts) in a process of its own, so its work is not the load generator's. */
import { announce, exitOnSignal } from '../../test/resilience/support/announce.js';
import { startFakeMiniapp } from './miniapp.js';

const miniapp = await startFakeMiniapp();
announce(miniapp.url);
exitOnSignal(() => miniapp.close());
