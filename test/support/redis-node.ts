import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';

/** A short-lived connection to one Redis node (or Sentinel) on this host, for a few admin commands. */
export async function withNode<T>(port: number, use: (node: Redis) => Promise<T>, password?: string): Promise<T> {
  const node = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 1 });
  // A node a test killed refuses: the caller's catch decides; no unhandled 'error' event.
  node.on('error', () => {});
  try {
    await node.connect();
    return await use(node);
  } finally {
    node.disconnect();
  }
}

/** Sends `signal` to a child still running and waits for it to exit. */
export async function signalAndWait(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/** SIGTERM (if still running), then removes its data directory. */
export async function stopServer(child: ChildProcess, dir: string): Promise<void> {
  await signalAndWait(child, 'SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
