import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second for /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds a process has used so far, from /proc/<pid>/stat; undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; fields after its closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Whether PostgreSQL runs on this machine (its backends are visible in /proc). */
export function postgresIsLocal(): boolean {
  return readdirSync('/proc').some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      return readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres';
    } catch {
      return false;
    }
  });
}

/**
 * CPU seconds the whole machine has spent running processes (all cores: user, nice, system,
 * steal), from /proc/stat. Interrupt time is left out: on loopback it is mostly the bench's own
 * traffic, and no process is charged for it.
 */
export function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , , , steal = 0] = fields;
  return (user + nice + system + steal) / TICKS_PER_SECOND;
}

/**
 * How many cores other work on the machine used while `run` ran: the machine's busy time less
 * the CPU of `ours()` (the bench's own processes and PostgreSQL backends, asked before and after;
 * one first seen after counts from zero, its whole life being within the run), per second.
 * Other sessions' test runs share this machine: a ratio measured while they ran is suspect.
 */
export async function foreignCores<T>(ours: () => Promise<number[]>, run: () => Promise<T>): Promise<{ result: T; foreignCores: number }> {
  const before = new Map((await ours()).map((pid) => [pid, cpuSeconds(pid) ?? 0]));
  const busyBefore = machineBusySeconds();
  const started = performance.now();
  const result = await run();
  const seconds = (performance.now() - started) / 1000;
  const busy = machineBusySeconds() - busyBefore;
  let own = 0;
  for (const pid of new Set([...before.keys(), ...(await ours())])) {
    const now = cpuSeconds(pid);
    if (now !== undefined) own += now - (before.get(pid) ?? 0);
  }
  return { result, foreignCores: Math.max(0, busy - own) / seconds };
}
