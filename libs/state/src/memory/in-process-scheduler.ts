import { systemClock, type Clock, type TimerHandle } from '@sluice/core';
import type { ConsumeOptions, EnqueueOptions, Job, JobHandler, QueueJobCount, RepeatOptions, Scheduler } from '../scheduler.js';
import { DEFAULT_BACKOFF_BASE_MS, DEFAULT_RETENTION_MS, backoffDelay, nextCronTime, type RepeatRule } from '../scheduler-rules.js';
import { resolveConcurrency, resolveEnqueue, resolveRepeat } from '../scheduler-rules.js';

export interface InProcessSchedulerOptions {
  /** How long finished (completed or failed) ids are remembered for dedupe; default 24 h. */
  retentionMs?: number;
  /** Base of the exponential retry backoff; default 1000 ms. */
  backoffBaseMs?: number;
  /**
   * Runs every delay, retry, schedule and sweep (default: the system clock). Its timers must
   * not keep the process alive: a pending job must not hold a finished CLI or test open.
   */
  clock?: Clock;
}

/** One run of a handler: a one-off job (kept in `jobs` for dedupe) or one occurrence of a schedule. */
interface Task {
  kind: string;
  id: string;
  data: unknown;
  trace: Record<string, string> | undefined;
  traceLink?: boolean;
  attempt: number;
  attempts: number;
  state: 'delayed' | 'ready' | 'running' | 'finished';
  /** When a delayed task is due: one due but still behind its timer counts as waiting, as in BullMQ. */
  dueAt: number;
  finishedAt: number;
  timer?: TimerHandle;
  schedule?: Schedule;
}

interface Schedule {
  kind: string;
  id: string;
  data: unknown;
  trace: Record<string, string> | undefined;
  rule: RepeatRule;
  timer?: TimerHandle;
  /** An occurrence waiting for a free slot; like BullMQ, a slow consumer gets no backlog of them. */
  waiting?: Task;
}

interface Consumer {
  handler: JobHandler;
  concurrency: number;
  running: number;
}

/**
 * Scheduler for memory mode: the same semantics as the BullMQ backend (deterministic ids,
 * at-least-once retries with exponential backoff, schedules), inside one process.
 */
export class InProcessScheduler implements Scheduler {
  readonly backend = 'memory' as const;
  private readonly retentionMs: number;
  private readonly backoffBaseMs: number;
  /** Keyed `<kind>:<id>`; unambiguous because kinds contain no ':'. */
  private readonly jobs = new Map<string, Task>();
  private readonly schedules = new Map<string, Schedule>();
  private readonly ready = new Map<string, Task[]>();
  private readonly consumers = new Map<string, Consumer>();
  private readonly running = new Set<Promise<void>>();
  private readonly clock: Clock;
  private readonly sweeper: TimerHandle;
  private started = false;
  private closed = false;

  constructor(opts: InProcessSchedulerOptions = {}) {
    this.retentionMs = opts.retentionMs ?? DEFAULT_RETENTION_MS;
    this.backoffBaseMs = opts.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS;
    this.clock = opts.clock ?? systemClock;
    // Finished ids are only needed for dedupe; forget them once past retention so memory stays bounded.
    this.sweeper = this.clock.setRepeating(() => this.sweep(), Math.max(10, Math.min(this.retentionMs, 60_000)));
  }

  async enqueue(kind: string, opts: EnqueueOptions): Promise<{ enqueued: boolean }> {
    this.assertOpen();
    const { delayMs, attempts } = resolveEnqueue(kind, opts);
    const existing = this.jobs.get(`${kind}:${opts.id}`);
    if (existing && !this.expired(existing)) return { enqueued: false };
    const task: Task = {
      kind,
      id: opts.id,
      data: opts.data,
      trace: opts.trace,
      attempt: 1,
      attempts,
      state: 'delayed',
      dueAt: this.clock.now() + delayMs,
      finishedAt: 0,
    };
    if (opts.traceLink) task.traceLink = true;
    this.jobs.set(`${kind}:${opts.id}`, task);
    // Even a 0 ms delay goes through a timer, so a handler never starts before enqueue returns.
    task.timer = this.clock.setTimer(() => this.makeReady(task), delayMs);
    return { enqueued: true };
  }

  async repeat(kind: string, opts: RepeatOptions): Promise<void> {
    this.assertOpen();
    const rule = resolveRepeat(kind, opts);
    const current = this.schedules.get(`${kind}:${opts.id}`);
    if (opts.onlyIfUnchanged && current && JSON.stringify(current.rule) !== JSON.stringify(rule)) return;
    // Every replica re-declares its schedules on boot; like BullMQ, an unchanged one keeps its timing.
    if (current && JSON.stringify([current.rule, current.data]) === JSON.stringify([rule, opts.data])) return;
    this.removeSchedule(kind, opts.id);
    // Re-declared without a trace (at start-up): keep the one it was declared with, as BullMQ does.
    const schedule: Schedule = { kind, id: opts.id, data: opts.data, trace: opts.trace ?? current?.trace, rule };
    this.schedules.set(`${kind}:${opts.id}`, schedule);
    // Like BullMQ's `every`, a fixed period fires once right away; cron waits for its next slot.
    const now = this.clock.now();
    this.arm(schedule, 'everyMs' in rule ? now : nextCronTime(rule, now));
  }

  async cancel(kind: string, id: string): Promise<boolean> {
    let removed = false;
    const task = this.jobs.get(`${kind}:${id}`);
    if (task && (task.state === 'delayed' || task.state === 'ready')) {
      this.unqueue(task);
      this.jobs.delete(`${kind}:${id}`);
      removed = true;
    }
    return this.removeSchedule(kind, id) || removed;
  }

  consume(kind: string, handler: JobHandler, opts: ConsumeOptions = {}): void {
    if (this.started) throw new Error('consume() must be called before start()');
    if (this.consumers.has(kind)) throw new Error(`kind ${kind} already has a consumer`);
    this.consumers.set(kind, { handler, concurrency: resolveConcurrency(opts), running: 0 });
  }

  async start(): Promise<void> {
    this.assertOpen();
    this.started = true;
    for (const kind of this.consumers.keys()) this.pump(kind);
  }

  async jobCounts(): Promise<QueueJobCount[]> {
    const names = { ready: 'waiting', running: 'active', delayed: 'delayed' } as const;
    const counts = new Map<string, QueueJobCount>();
    for (const kind of this.consumers.keys()) {
      for (const state of Object.values(names)) counts.set(`${kind}\u0000${state}`, { queue: kind, state, count: 0 });
    }
    const now = this.clock.now();
    for (const task of this.jobs.values()) {
      if (task.state === 'finished') continue;
      const state = task.state === 'delayed' && task.dueAt <= now ? 'waiting' : names[task.state];
      const entry = counts.get(`${task.kind}\u0000${state}`);
      if (entry) entry.count += 1;
    }
    return [...counts.values()];
  }

  async close(): Promise<void> {
    this.closed = true;
    this.sweeper.cancel();
    for (const task of this.jobs.values()) task.timer?.cancel();
    for (const schedule of this.schedules.values()) schedule.timer?.cancel();
    await Promise.allSettled([...this.running]);
  }

  private arm(schedule: Schedule, at: number): void {
    schedule.timer = this.clock.setTimer(() => {
      if (this.schedules.get(`${schedule.kind}:${schedule.id}`) !== schedule) return; // replaced or cancelled
      if (!schedule.waiting) {
        const task: Task = {
          kind: schedule.kind,
          id: schedule.id,
          data: schedule.data,
          trace: schedule.trace,
          attempt: 1,
          attempts: 1,
          state: 'delayed',
          dueAt: this.clock.now(),
          finishedAt: 0,
          schedule,
        };
        schedule.waiting = task;
        this.makeReady(task);
      }
      const { rule } = schedule;
      // Never arm in the past (a stalled event loop would replay missed slots), nor from a time
      // before the planned one (a timer firing a little early would hit the same cron slot again).
      // A fixed period keeps its phase, as BullMQ's does: the next slot of the grid after now.
      const now = this.clock.now();
      this.arm(schedule, 'everyMs' in rule ? nextSlot(at, rule.everyMs, now) : nextCronTime(rule, Math.max(at, now)));
    }, at - this.clock.now());
  }

  private makeReady(task: Task): void {
    task.timer = undefined;
    task.state = 'ready';
    const queue = this.ready.get(task.kind) ?? [];
    this.ready.set(task.kind, queue);
    queue.push(task);
    this.pump(task.kind);
  }

  private pump(kind: string): void {
    const consumer = this.consumers.get(kind);
    const queue = this.ready.get(kind);
    if (!this.started || this.closed || !consumer || !queue) return;
    while (consumer.running < consumer.concurrency) {
      const task = queue.shift();
      if (!task) break;
      this.run(task, consumer);
    }
  }

  private run(task: Task, consumer: Consumer): void {
    task.state = 'running';
    if (task.schedule?.waiting === task) task.schedule.waiting = undefined;
    consumer.running += 1;
    // .finally runs asynchronously, so `done` is assigned even when the handler throws synchronously.
    const done: Promise<void> = this.execute(task, consumer).finally(() => {
      consumer.running -= 1;
      this.running.delete(done);
      this.pump(task.kind);
    });
    this.running.add(done);
  }

  private async execute(task: Task, consumer: Consumer): Promise<void> {
    try {
      const job: Job = { id: task.id, kind: task.kind, data: task.data, attempt: task.attempt, lastTry: task.attempt >= task.attempts, workerDeaths: 0 };
      if (task.trace) job.trace = task.trace;
      if (task.traceLink) job.traceLink = true;
      if (task.schedule) job.scheduled = true;
      await consumer.handler(job);
      this.finish(task);
    } catch {
      if (task.attempt < task.attempts && !this.closed) {
        const wait = backoffDelay(this.backoffBaseMs, task.attempt);
        task.attempt += 1;
        task.state = 'delayed';
        task.dueAt = this.clock.now() + wait;
        task.timer = this.clock.setTimer(() => this.makeReady(task), wait);
      } else {
        this.finish(task); // out of attempts: failed, still remembered for dedupe like BullMQ's removeOnFail age
      }
    }
  }

  private finish(task: Task): void {
    task.state = 'finished';
    task.finishedAt = this.clock.now();
  }

  private removeSchedule(kind: string, id: string): boolean {
    const schedule = this.schedules.get(`${kind}:${id}`);
    if (!schedule) return false;
    schedule.timer?.cancel();
    if (schedule.waiting) this.unqueue(schedule.waiting);
    this.schedules.delete(`${kind}:${id}`);
    return true;
  }

  /** Takes a not-yet-started task off its timer or ready queue. */
  private unqueue(task: Task): void {
    task.timer?.cancel();
    const queue = this.ready.get(task.kind);
    const at = queue?.indexOf(task) ?? -1;
    if (queue && at >= 0) queue.splice(at, 1);
  }

  private expired(task: Task): boolean {
    return task.state === 'finished' && this.clock.now() - task.finishedAt >= this.retentionMs;
  }

  private sweep(): void {
    for (const [key, task] of this.jobs) if (this.expired(task)) this.jobs.delete(key);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('scheduler is closed');
  }
}

/** The first slot of the grid `at + k × everyMs` (k ≥ 1) that is not before `now`. */
function nextSlot(at: number, everyMs: number, now: number): number {
  return at + everyMs * Math.max(1, Math.ceil((now - at) / everyMs));
}
