import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

export interface Child {
  proc: ChildProcess;
  /** Every JSON line the child printed so far. */
  messages: Record<string, unknown>[];
  /** Resolves with the first message (past or future) matching `pred`. */
  waitFor(pred: (m: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

/** Runs a TypeScript fixture from source in a fresh Node process, the way the real apps run in dev. */
export function spawnFixture(script: string, args: string[], env: Record<string, string>): Child {
  const proc = spawn(process.execPath, ['--conditions=sluice-source', '--import', 'tsx', `libs/state/test/fixtures/${script}`, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const messages: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    try {
      messages.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return; // not one of our reports
    }
    for (const w of waiters) w();
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const waitFor: Child['waitFor'] = (pred, timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const hit = messages.find(pred);
        if (!hit) return;
        cleanup();
        resolve(hit);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`child ${script} ${args.join(' ')}: no matching message; got ${JSON.stringify(messages)}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return { proc, messages, waitFor, exited };
}

/** Ends a child we started, by its own pid; resolves once it has exited. */
export async function stopChild(child: Child, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill(signal);
  await child.exited;
}
