import path from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import { KEPT_RUNS, RUN_ID_PATTERN } from '../../../generated/sdk/bridge-conformance-contract.js';
import { packageRoot } from '../../contract/documents.js';
import { checkReport } from '../../shipped/bridge-conformance/report.js';
import type { Report, RunList } from '../../shipped/bridge-conformance/vectors.js';
import { jsonBodyOf, SandboxRequestError, sendJson } from './http.js';

/**
 * The bridge conformance page on the sandbox miniapp server (ADR 0040): the page itself at
 * `/bridge-conformance/` (generated/bridge-conformance/), and the runs it reports at
 * `/sandbox/bridge-runs/{run}`, which `minibridge verify bridge` reads. Runs live in memory, the
 * newest {@link MAX_RUNS} kept (`$defs/RunList` of bridge-conformance.schema.yaml).
 */
export const MAX_RUNS = KEPT_RUNS;
const RUN_ID = new RegExp(RUN_ID_PATTERN);

export class BridgeRuns {
  private readonly runs = new Map<string, Report>();

  put(report: Report): void {
    this.runs.delete(report.run);
    this.runs.set(report.run, report);
    while (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
  }

  get(run: string): Report | undefined {
    return this.runs.get(run);
  }

  /** Newest first: what a CI without a run name reads. */
  list(): RunList['runs'] {
    return [...this.runs.values()]
      .reverse()
      .map(({ run, finished, passed, updatedAt }) => ({ run, finished, passed, ...(updatedAt && { updatedAt }) }));
  }
}

/** The page's static files. Framed by any host app; it loads nothing from elsewhere. */
export function bridgeConformancePage(): Router {
  const router = Router();
  router.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'");
    next();
  });
  router.use(express.static(path.join(packageRoot(), 'generated', 'bridge-conformance'), { index: 'index.html', redirect: true }));
  return router;
}

/** `PUT|GET /bridge-runs/{run}`, `GET /bridge-runs` on a sandbox control router. */
export function addBridgeRunRoutes(control: Router, runs: BridgeRuns): void {
  const runOf = (req: Request): string => {
    const run = String(req.params.run);
    if (!RUN_ID.test(run)) throw new SandboxRequestError(`a run is named by ${RUN_ID_PATTERN}, not ${JSON.stringify(run.slice(0, 80))}`);
    return run;
  };
  control.put('/bridge-runs/:run', (req: Request, res: Response) => {
    const run = runOf(req);
    const checked = checkReport(jsonBodyOf(req));
    if (checked.problem !== undefined)
      throw new SandboxRequestError(`the report breaks bridge-conformance.schema.yaml#/$defs/Report: ${checked.problem}`);
    if (checked.report.run !== run) throw new SandboxRequestError(`the report is for run ${checked.report.run}, not ${run}`);
    runs.put(checked.report);
    sendJson(res, 200, { run, finished: checked.report.finished });
  });
  control.get('/bridge-runs/:run', (req: Request, res: Response) => {
    const run = runOf(req);
    const report = runs.get(run);
    if (!report) throw new SandboxRequestError(`no bridge conformance run ${run} has reported here`, 404, 'NOT_FOUND');
    sendJson(res, 200, report);
  });
  control.get('/bridge-runs', (_req: Request, res: Response) => sendJson(res, 200, { runs: runs.list() } satisfies RunList));
}
