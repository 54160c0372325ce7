import { sampleAction } from './start-gateway.js';

/** A closed loop of dispatches in flight against a cluster, and what it got back. */
export interface DispatchLoad {
  /** Dispatches sent so far. */
  sent(): number;
  /** Resolves when all have been answered: the ids answered 200, and the other statuses. */
  done: Promise<{ answered: Set<string>; failed: number[] }>;
}

/**
 * Sends `total` sample dispatches of `tenant` (ids `<prefix>-<n>`), `concurrency` at a time,
 * each to the base URL `target()` names next (round-robin over replicas, dead ones included).
 */
export function dispatchLoad(target: () => string, opts: { total: number; concurrency: number; prefix: string; tenant: string }): DispatchLoad {
  const answered = new Set<string>();
  const failed: number[] = [];
  let sent = 0;
  const lane = async () => {
    while (sent < opts.total) {
      const id = `${opts.prefix}-${sent++}`;
      const res = await fetch(`${target()}/v1/dispatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sampleAction({ id, tenant: opts.tenant })),
      });
      if (res.status === 200) answered.add(id);
      else failed.push(res.status);
      await res.arrayBuffer();
    }
  };
  const done = Promise.all(Array.from({ length: opts.concurrency }, lane)).then(() => ({ answered, failed }));
  return { sent: () => sent, done };
}
