/**
 * The Scheduler contract: delayed, repeatable and immediate background jobs with deterministic
 * ids. In memory mode it runs in-process; in Redis mode it is BullMQ, so any API replica can
 * enqueue and any worker can run the job. Delivery is at least once: handlers must be
 * idempotent (re-read state and check it with a CAS before acting).
 */

export interface Job<T = unknown> {
  id: string;
  kind: string;
  data: T;
  /** 1 on the first run, 2 on the first retry, ... */
  attempt: number;
  /** A throw now is not retried: the job fails for good (its attempts are used up). */
  lastTry: boolean;
  /**
   * How many times a worker died while running this job. Once it is WORKER_DEATHS_TOLERATED, one
   * more death fails the job for good without running it again: a handler that must not be left
   * half done gives up (and records why) instead of running a step that may be what kills workers.
   */
  workerDeaths: number;
  /** W3C trace context of whoever enqueued it (`traceparent`, `tracestate`), when tracing is on. */
  trace?: Record<string, string> | undefined;
  /** The job starts a trace of its own, linked to `trace`, instead of continuing it. */
  traceLink?: boolean;
  /** An occurrence of a repeat schedule rather than an enqueued job. */
  scheduled?: boolean;
}

/** A job whose worker died more often than this is failed by the scheduler (BullMQ's maxStalledCount); memory mode has no separate workers. */
export const WORKER_DEATHS_TOLERATED = 3;

export type JobHandler<T = unknown> = (job: Job<T>) => Promise<void>;

export interface EnqueueOptions {
  /** Deterministic id: enqueuing an id that is pending, running or recently done is a no-op. */
  id: string;
  data?: unknown;
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
  /** Total tries including the first (default 5); retries back off exponentially. */
  attempts?: number;
  /** Trace context handed to the job (Job.trace). */
  trace?: Record<string, string> | undefined;
  /** Job.traceLink: for work that follows on from work (a group's next cycle), so one trace does not grow for days. */
  traceLink?: boolean;
}

export interface RepeatOptions {
  /** Schedule id; repeating an existing id replaces its schedule. */
  id: string;
  data?: unknown;
  /** Either a fixed period... */
  everyMs?: number;
  /** ...or a 5-field cron expression, evaluated in `timezone` (default UTC). */
  cron?: string;
  timezone?: string;
  /** Trace context handed to every occurrence (Job.trace): the trace that declared the schedule. */
  trace?: Record<string, string> | undefined;
  /**
   * Leave alone a stored schedule of this id with other timings (a schedule check putting back a
   * dropped run): re-timing runs it at once, and during a rolling deploy that changes an interval
   * the old and the new workers would take turns doing so at every check.
   */
  onlyIfUnchanged?: boolean;
}

export interface ConsumeOptions {
  /** Jobs of this kind run at most this many at a time per process (default 1). */
  concurrency?: number;
}

/** How many jobs of one kind are in one state (BullMQ's names). */
export interface QueueJobCount {
  queue: string;
  state: 'waiting' | 'active' | 'delayed';
  count: number;
}

export interface Scheduler {
  readonly backend: 'memory' | 'bullmq';
  /** True when a new job was created; false when the id already existed. */
  enqueue(kind: string, opts: EnqueueOptions): Promise<{ enqueued: boolean }>;
  repeat(kind: string, opts: RepeatOptions): Promise<void>;
  /** Removes a job that has not started yet, or a repeat schedule. True when something was removed. */
  cancel(kind: string, id: string): Promise<boolean>;
  /** Registers the handler for a kind; only processes that consume (workers) call this. */
  consume(kind: string, handler: JobHandler, opts?: ConsumeOptions): void;
  /** Starts consuming the registered kinds. */
  start(): Promise<void>;
  /** Stops taking jobs, waits for running handlers, releases connections. */
  close(): Promise<void>;
  /** The jobs of the kinds this process consumes, by state (a process that consumes nothing: none). */
  jobCounts(): Promise<QueueJobCount[]>;
}
