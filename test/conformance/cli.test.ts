import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsWrongAuthorization } from './broken/acceptsWrongAuthorization.js';
import { HOSTAPP, referenceHostappRouter, serve, type RunningServer } from './reference.js';

const run = promisify(execFile);

/** The `minibridge` command as npx runs it (bin/minibridge.js through tsx). */
async function minibridge(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/minibridge.js', ...args], { cwd: join(import.meta.dirname, '../..') });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('minibridge verify (the command)', { timeout: 60_000 }, () => {
  let good: RunningServer;
  let broken: RunningServer;
  beforeAll(async () => {
    good = await serve(express().use(referenceHostappRouter()));
    broken = await serve(acceptsWrongAuthorization().app);
  });
  afterAll(async () => {
    await good.close();
    await broken.close();
  });

  it('exits 0 for a conforming server and writes JUnit XML', async () => {
    const junit = join(mkdtempSync(join(tmpdir(), 'minibridge-verify-')), 'verify.xml');
    const result = await minibridge([
      'verify',
      'hostapp',
      '--url',
      good.url,
      '--credentials',
      `${HOSTAPP.id}:${HOSTAPP.secret}`,
      '--junit',
      junit,
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^positive +E3 createHostappOrderPayment +pass/m);
    expect(result.stdout).toContain('PASSED');
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('<testsuites name="minibridge verify hostapp"');
    expect(xml).toContain('failures="0"');
  });

  it('exits 1 and names the failing check, with the failing request, for a broken server', async () => {
    const result = await minibridge([
      'verify',
      'hostapp',
      '--url',
      broken.url,
      '--credentials',
      `${HOSTAPP.id}:${HOSTAPP.secret}`,
      '--only',
      'auth',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^auth +E3 createHostappOrderPayment +FAIL/m);
    expect(result.stdout).toContain('wrong Authorization (right id, wrong secret): accepted');
    expect(result.stdout).not.toMatch(/^positive /m);
  });

  it('stops with one message when the target cannot be reached, and points at --credentials when it refuses them', async () => {
    const closed = await serve(express());
    const url = closed.url;
    await closed.close();
    const unreachable = await minibridge(['verify', 'hostapp', '--url', url, '--credentials', `${HOSTAPP.id}:${HOSTAPP.secret}`]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout.match(/ECONNREFUSED/g)).toHaveLength(1);
    expect(unreachable.stdout).toContain(`STOPPED: cannot reach ${url}/create-order-payment`);
    expect(unreachable.stdout).not.toMatch(/pass \(/);

    const refused = await minibridge(['verify', 'hostapp', '--url', good.url, '--credentials', `${HOSTAPP.id}:not-the-secret`]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('refused the credentials on every operation asked');
    expect(refused.stdout).toContain('Check --credentials <hostapp_client_id>:<hostapp_secret_key>');
    expect(refused.stdout).not.toMatch(/pass \(/);
  });

  it('exits 2 with the usage on a usage error', async () => {
    const result = await minibridge(['verify', 'hostapp', '--credentials', 'a:b']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--url <base> is required');
  });
});
