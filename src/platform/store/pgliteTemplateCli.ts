/**
 * The `prepare` script (`npm install`, `npm ci`): makes the PGlite template cluster, and its
 * archive for `memory://` databases, ahead of the first start (ADR 0021). A failure only warns:
 * the first fresh start then makes it, still outside the serving process.
 */
import { ensurePgliteTemplate, pgliteTemplateArchive } from './pgliteCluster.js';

try {
  const dir = await ensurePgliteTemplate();
  await pgliteTemplateArchive();
  process.stdout.write(`PGlite template cluster ready at ${dir}\n`);
} catch (error) {
  process.stderr.write(`warning: the PGlite template cluster was not made (the first start will make it): ${(error as Error).message}\n`);
}
