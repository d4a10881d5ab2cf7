import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { runHeld } from '../../scripts/lib/side-by-side.js';

// The runner behind `npm test` (ADR 0044): the checks run beside vitest with their reports held,
// so a failing check must still fail the command and its report must come out whole.

const node = process.execPath;

function held(name: string, source: string, niceness?: number) {
  const written: string[] = [];
  const done = runHeld(name, node, ['-e', source], { cwd: os.tmpdir(), niceness, write: (text) => written.push(text) });
  return done.then((outcome) => ({ outcome, written }));
}

describe('runHeld', () => {
  it('holds the output of both streams and writes it once, whole, under a heading that says it passed', async () => {
    const { outcome, written } = await held('a check', `console.log('one'); console.error('two'); console.log('three');`);
    expect(outcome).toEqual({ name: 'a check', ok: true });
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/── a check: passed ──\n/);
    for (const line of ['one', 'two', 'three']) expect(written[0]).toContain(`${line}\n`);
  });

  it('a command that exits 1 fails, and its report still comes out', async () => {
    const { outcome, written } = await held('lint', `console.error('✘ lint: 1 error'); process.exit(1);`);
    expect(outcome).toEqual({ name: 'lint', ok: false });
    expect(written.join('')).toMatch(/── lint: FAILED \(exit 1\) ──\n✘ lint: 1 error/);
  });

  it('a command killed by a signal fails and says so', async () => {
    const { outcome, written } = await held('stuck', `process.kill(process.pid, 'SIGKILL')`);
    expect(outcome.ok).toBe(false);
    expect(written.join('')).toContain('FAILED (SIGKILL)');
  });

  it('a command that cannot start fails instead of hanging', async () => {
    const written: string[] = [];
    const outcome = await runHeld('missing', '/nonexistent/tool', [], { cwd: os.tmpdir(), write: (text) => written.push(text) });
    expect(outcome.ok).toBe(false);
    expect(written.join('')).toContain('FAILED (spawn /nonexistent/tool ENOENT)');
  });

  it('runs the command at the lower priority asked for, so what it starts inherits it', async () => {
    const { outcome, written } = await held('nice', `console.log('niceness=' + require('node:os').getPriority())`, 5);
    expect(outcome.ok).toBe(true);
    const expected = Math.min(19, os.getPriority() + 5);
    expect(written.join('')).toContain(`niceness=${expected}`);
  });
});
