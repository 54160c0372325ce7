/** How often the parent is checked; a stop is then at most this late. */
const CHECK_INTERVAL_MS = 250;

/**
 * Under npm (`npm start`, `npx sluice`), calls `onGone` once the parent process has exited.
 * npm forwards SIGTERM/SIGINT only to its direct child, which for `npx` (and any script without
 * `exec`) is a `sh -c` that dies of SIGTERM without passing it on: this process is then
 * re-parented (to init or a subreaper) and would keep serving on its port as an orphan. Outside
 * npm a changed parent proves nothing (nohup, daemonising shells), so nothing is watched.
 */
export function whenParentExits(onGone: () => void, env: NodeJS.ProcessEnv = process.env): void {
  if (!env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, CHECK_INTERVAL_MS);
  timer.unref();
}
