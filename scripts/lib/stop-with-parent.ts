/**
 * Runs `stop` on SIGTERM or SIGINT, and when the process that started this one exits without
 * passing a signal on (killed with SIGKILL, crashed): its children must not keep serving ports.
 * An orphan is re-parented, so a changed `process.ppid` means the parent is gone.
 */
export function stopWithParent(stop: (reason: string) => Promise<void>, pollMs = 500): void {
  const parent = process.ppid;
  let stopping: Promise<void> | undefined;
  const once = (reason: string) => {
    stopping ??= stop(reason).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => once(signal));
  setInterval(() => {
    if (process.ppid !== parent) once('parent exited');
  }, pollMs).unref();
}
