/**
 * `npm test`'s first step: the browser suites run against Debian's Chromium headless shell (ADR
 * 0044, ADR 0049), so a fresh machine gets it here rather than from a manual step. Present: nothing to do. Missing, as root
 * with apt-get: installed, with a bounded time. Missing otherwise: the test command fails here
 * with what to do, because the browser suites never skip. `scripts/test.ts` imports it as its first
 * step (one process fewer before the suites start); run alone, it does the same.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { chromiumPackage, chromiumPath } from './lib/docs-browser.js';

/** apt-get's whole run (update and install) may take this long; a stuck mirror fails the run. */
const INSTALL_LIMIT_MS = 10 * 60_000;
/** How long apt-get waits for another apt or dpkg holding the lock (a shared machine). */
const LOCK_WAIT_S = 180;

function runnable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function fail(message: string): never {
  console.error(`\nensure-chromium: ${message}\n`);
  process.exit(1);
}

function install(): void {
  const how =
    'The browser suites (test/browser/, docs-render, served-docs) need Chromium and are never skipped. ' +
    `Install it with \`apt-get update && apt-get install -y ${chromiumPackage}\` (Debian), or set CHROMIUM_PATH to a Chromium or Chrome binary.`;

  if (process.env['CHROMIUM_PATH'] !== undefined) fail(`CHROMIUM_PATH=${chromiumPath} is not an executable file. ${how}`);
  if (process.env['MINIBRIDGE_NO_APT'] === '1')
    fail(`Chromium is missing at ${chromiumPath} and MINIBRIDGE_NO_APT=1 forbids installing it. ${how}`);
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    fail(`Chromium is missing at ${chromiumPath}, and this user cannot install it (needs root and apt-get). ${how}`);
  }

  console.log(
    `ensure-chromium: Chromium is missing at ${chromiumPath}; installing Debian's ${chromiumPackage} with apt-get (at most ${INSTALL_LIMIT_MS / 60_000} min)…`,
  );
  const started = Date.now();
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['-qq', '-o', `DPkg::Lock::Timeout=${LOCK_WAIT_S}`, 'update'],
    ['-y', '-qq', '-o', `DPkg::Lock::Timeout=${LOCK_WAIT_S}`, 'install', chromiumPackage],
  ]) {
    const left = INSTALL_LIMIT_MS - (Date.now() - started);
    const result = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: Math.max(left, 1) });
    if (result.error || result.status !== 0) {
      const why = result.error ? result.error.message : `exit code ${result.status}`;
      fail(`\`apt-get ${args.join(' ')}\` failed (${why}). ${how}`);
    }
  }
  if (!runnable(chromiumPath)) fail(`apt-get installed ${chromiumPackage} but ${chromiumPath} is still missing. ${how}`);
  console.log(`ensure-chromium: installed in ${Math.round((Date.now() - started) / 1000)} s.`);
}

if (!runnable(chromiumPath)) install();
