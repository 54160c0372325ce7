import type { Queue } from 'bullmq';

/** What the scheduler knows of one queue's worker. */
export interface WorkerProgress {
  /** When it last took a job (or was created). */
  lastTakenAt: number;
  /** Its handlers running now. */
  active: number;
}

/** A delayed job this late, or a waiting one, is work an idle healthy worker would have taken. */
const OVERDUE_MS = 5000;

/**
 * Whether a queue has work a worker should have taken by now: a waiting job, or a delayed one
 * past its time by more than OVERDUE_MS (BullMQ's workers promote delayed jobs themselves, so a
 * worker that stopped fetching leaves them delayed for ever). The due time is the delayed set's
 * own (a retried job's is its backoff from the failure, not its creation time plus its delay).
 */
export async function hasOverdueWork(queue: Queue, now: number): Promise<boolean> {
  const counts = await queue.getJobCounts('waiting', 'prioritized');
  if ((counts.waiting ?? 0) + (counts.prioritized ?? 0) > 0) return true;
  return (await queue.getDelayedCount(now - OVERDUE_MS)) > 0;
}

/**
 * A worker looks stuck when it has run nothing for `idleMs` while nothing of its own is running:
 * only then is the queue asked whether work waits (a busy worker is left alone, and restarting
 * one that runs a handler could lose the handler's result).
 */
export function idleLongEnough(progress: WorkerProgress, now: number, idleMs: number): boolean {
  return progress.active === 0 && now - progress.lastTakenAt >= idleMs;
}
