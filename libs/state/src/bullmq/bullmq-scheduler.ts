import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job as BullJob, type RepeatStrategy } from 'bullmq';
import { closeClient, createClient, type RedisClient, type RedisTarget } from '../redis/connection.js';
import {
  WORKER_DEATHS_TOLERATED,
  type ConsumeOptions,
  type EnqueueOptions,
  type Job,
  type JobHandler,
  type QueueJobCount,
  type RepeatOptions,
  type Scheduler,
} from '../scheduler.js';
import {
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_RETENTION_MS,
  assertKind,
  nextCronTime,
  resolveConcurrency,
  resolveEnqueue,
  resolveRepeat,
  type RepeatRule,
} from '../scheduler-rules.js';
import { throttleErrors, writeErrorToStderr, type BackgroundErrorHandler } from '../error-reports.js';
import { bullPrefix, encodeJobId, type Envelope } from './bullmq-naming.js';
import { routeBullMqWarnings } from './console-warnings.js';
import { hasOverdueWork, idleLongEnough, type WorkerProgress } from './worker-watchdog.js';

export interface BullMqSchedulerOptions extends RedisTarget {
  /** The deployment's key prefix; BullMQ keys live under `{<prefix>}:bull` (see bullPrefix for Redis Cluster). */
  prefix: string;
  /** How long a worker's lock on a job lasts without renewal (default 30 s). */
  lockDurationMs?: number;
  /** How often workers look for jobs whose worker died (default 30 s). */
  stalledIntervalMs?: number;
  /** Base of the exponential retry backoff (default 1000 ms). */
  backoffBaseMs?: number;
  /** How long finished jobs (and so their ids, for dedupe) are kept (default 24 h). */
  completedRetentionMs?: number;
  /**
   * Connection, queue and worker errors no call can return (Redis away, a worker's poll failing);
   * identical messages are passed on at most once per 30 s. Default: a line on stderr.
   */
  onError?: BackgroundErrorHandler;
  /**
   * How long a worker may take no job, with none running, before the queue is asked whether work
   * waits for it; if so the worker is replaced (default 30 s). See watchWorkers.
   */
  watchdogIdleMs?: number;
}

/** How a queue's jobs are run: the same for a worker and the one that replaces it. */
interface Consumption {
  kind: string;
  concurrency: number;
  run: (job: BullJob) => Promise<unknown>;
  markFinished: (job: BullJob | undefined) => void;
  progress: WorkerProgress;
}

/** One queue's worker, and the client it alone uses (closed with it). */
interface ConsumerWorker {
  worker: Worker;
  client: RedisClient;
  consumption: Consumption;
}

const PENDING_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);
const DEFAULT_WATCHDOG_IDLE_MS = 30_000;
/** How long a replaced worker's close is waited for before its client is dropped anyway. */
const RETIRE_WAIT_MS = 5000;

/**
 * Scheduler for Redis mode on BullMQ: one queue per job kind (queue name = kind). Producers
 * (API replicas) only create queues, lazily, on one shared connection; Workers exist only in
 * processes that called consume() and start().
 */
export class BullMqScheduler implements Scheduler {
  readonly backend = 'bullmq' as const;
  private readonly producer: RedisClient;
  private readonly queues = new Map<string, Queue>();
  private readonly consumers = new Map<string, { handler: JobHandler; concurrency: number }>();
  private readonly workers = new Map<string, ConsumerWorker>();
  /** Workers replaced by the watchdog whose close has not finished: shutdown closes them too. */
  private readonly retiring = new Set<Promise<void>>();
  private watchdog: NodeJS.Timeout | undefined;
  /** Handlers running now: close() waits for them itself (see shutdown). */
  private readonly running = new Set<Promise<unknown>>();
  private readonly retentionSec: number;
  private readonly onError: (err: unknown) => void;
  /** Undoes the routing of BullMQ's console warnings to onError. */
  private readonly unrouteWarnings: () => void;
  private started = false;
  private closing: Promise<void> | undefined;
  /** Set once running handlers have settled: until then a handler's next job (a chain's next step) is still accepted. */
  private producerClosed = false;

  constructor(private readonly opts: BullMqSchedulerOptions) {
    this.retentionSec = Math.ceil((opts.completedRetentionMs ?? DEFAULT_RETENTION_MS) / 1000);
    this.onError = throttleErrors(opts.onError ?? writeErrorToStderr('scheduler'));
    this.unrouteWarnings = routeBullMqWarnings(this.onError);
    // Lazy so a process that never enqueues never connects; default retries so an enqueue
    // fails (and the API answers 5xx) instead of hanging while Redis is away.
    this.producer = createClient(opts, { lazyConnect: true, maxRetriesPerRequest: 20 });
    this.producer.on('error', this.onError);
  }

  async enqueue(kind: string, opts: EnqueueOptions): Promise<{ enqueued: boolean }> {
    const { delayMs, attempts } = resolveEnqueue(kind, opts);
    const queue = this.queue(kind);
    const jobId = encodeJobId(opts.id);
    const token = randomUUID();
    const envelope: Envelope = { id: opts.id, token, data: opts.data, ...(opts.trace ? { trace: opts.trace } : {}), ...(opts.traceLink ? { link: true } : {}) };
    // BullMQ's add is atomic but answers the same whether it created the job or found one with
    // this id, so read the token back: only the creating call's token is stored.
    await queue.add(kind, envelope, {
      jobId,
      delay: delayMs,
      attempts,
      backoff: { type: 'exponential', delay: this.opts.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS },
      removeOnComplete: { age: this.retentionSec },
      removeOnFail: { age: this.retentionSec },
    });
    const stored = await queue.getJob(jobId);
    // Missing means someone removed it in between (a cancel); we cannot tell who created it, and
    // false is the safe answer for callers that only act on a fresh enqueue.
    return { enqueued: (stored?.data as Envelope | undefined)?.token === token };
  }

  async repeat(kind: string, opts: RepeatOptions): Promise<void> {
    const rule = resolveRepeat(kind, opts);
    const stored = await this.queue(kind).getJobScheduler(encodeJobId(opts.id));
    if (opts.onlyIfUnchanged && stored && !sameTiming(stored, rule)) return;
    // Re-declared without a trace (every worker at start-up): keep the one it was declared with.
    const trace = opts.trace ?? (stored?.template?.data as Envelope | undefined)?.trace;
    const envelope: Envelope = { id: opts.id, data: opts.data, ...(trace ? { trace } : {}) };
    // Upserting an unchanged schedule (every replica on boot) adds no extra run. Occurrence ids are
    // unique per slot, so there is nothing to dedupe: keeping finished ones would only grow Redis
    // by a hash per tick. Failures are for the handler wrapper's logs and metrics to report.
    await this.queue(kind).upsertJobScheduler(encodeJobId(opts.id), 'everyMs' in rule ? { every: rule.everyMs } : { pattern: rule.cron, tz: rule.timezone }, {
      name: kind,
      data: envelope,
      opts: { removeOnComplete: true, removeOnFail: true },
    });
  }

  async cancel(kind: string, id: string): Promise<boolean> {
    assertKind(kind);
    const queue = this.queue(kind);
    const jobId = encodeJobId(id);
    let removed = false;
    const job = await queue.getJob(jobId);
    // queue.remove() would also delete a finished job (and free its id); only pending ones count.
    // If the job starts between getState and remove, remove() sees the lock and returns 0.
    if (job && PENDING_STATES.has(await job.getState())) removed = (await queue.remove(jobId)) === 1;
    const scheduleRemoved = await queue.removeJobScheduler(jobId);
    return removed || scheduleRemoved;
  }

  consume(kind: string, handler: JobHandler, opts: ConsumeOptions = {}): void {
    assertKind(kind);
    if (this.started) throw new Error('consume() must be called before start()');
    if (this.consumers.has(kind)) throw new Error(`kind ${kind} already has a consumer`);
    this.consumers.set(kind, { handler, concurrency: resolveConcurrency(opts) });
  }

  async start(): Promise<void> {
    if (this.closing) throw new Error('scheduler is closed');
    if (this.started) return;
    this.started = true;
    for (const [kind, { handler, concurrency }] of this.consumers) {
      const progress: WorkerProgress = { lastTakenAt: Date.now(), active: 0 };
      // Tracked until BullMQ has recorded the job finished (its `completed`/`failed` event), not
      // just until the handler settles: close() must not cut that write off (the job would run again).
      const finished = new Map<string, () => void>();
      const run = (job: BullJob) => {
        progress.lastTakenAt = Date.now();
        progress.active += 1;
        const recorded = new Promise<void>((resolve) => finished.set(job.id ?? '', resolve));
        const done = handler(toJob(kind, job));
        const tracked = done.then(settleWithin(recorded), settleWithin(recorded));
        this.running.add(tracked);
        void tracked.finally(() => {
          progress.active -= 1;
          this.running.delete(tracked);
          finished.delete(job.id ?? '');
        });
        return done;
      };
      const markFinished = (job: BullJob | undefined) => finished.get(job?.id ?? '')?.();
      this.workers.set(kind, this.newWorker({ kind, concurrency, run, markFinished, progress }));
    }
    await Promise.all([...this.workers.values()].map((w) => w.worker.waitUntilReady()));
    const idleMs = this.opts.watchdogIdleMs ?? DEFAULT_WATCHDOG_IDLE_MS;
    let watching = false;
    this.watchdog = setInterval(
      () => {
        if (watching) return; // a look that outlasts the interval (Redis slow) is not doubled
        watching = true;
        void this.watchWorkers(idleMs).finally(() => {
          watching = false;
        });
      },
      Math.max(100, idleMs / 3),
    );
    this.watchdog.unref();
  }

  private newWorker(consumption: Consumption): ConsumerWorker {
    const { kind, concurrency, run, markFinished } = consumption;
    const client = this.workerClient();
    const worker = new Worker(kind, run, {
      connection: client,
      prefix: this.prefixOf(kind),
      settings: { repeatStrategy: cronRepeatStrategy },
      concurrency,
      lockDuration: this.opts.lockDurationMs ?? 30_000,
      stalledInterval: this.opts.stalledIntervalMs ?? 30_000,
      // A job whose worker died is run again this many times before BullMQ fails it; deploys kill workers.
      maxStalledCount: WORKER_DEATHS_TOLERATED,
    });
    worker.on('error', this.onError);
    worker.on('completed', markFinished);
    worker.on('failed', markFinished);
    return { worker, client, consumption };
  }

  /**
   * Replaces a worker that takes no job while its queue has work for it. On a Redis Cluster a
   * worker could stop fetching after a primary died (its blocking read left on the dead node's
   * connection) and run nothing more until the process restarted, while /ready said all was well.
   * Only a worker with nothing running is replaced: closing it loses no handler's result.
   */
  private async watchWorkers(idleMs: number): Promise<void> {
    if (this.closing) return;
    for (const [kind, current] of this.workers) {
      const { progress } = current.consumption;
      const now = Date.now();
      if (!idleLongEnough(progress, now, idleMs)) continue;
      const stuck = await hasOverdueWork(this.queue(kind), now).catch(() => false); // Redis away: nothing to tell
      if (!stuck || this.closing || this.workers.get(kind) !== current || !idleLongEnough(progress, Date.now(), idleMs)) continue;
      this.onError(new Error(`the ${kind} worker took no job for ${Math.round((now - progress.lastTakenAt) / 1000)} s while its queue had work; replaced it`));
      progress.lastTakenAt = Date.now();
      this.workers.set(kind, this.newWorker(current.consumption));
      const retired = this.retire(current);
      this.retiring.add(retired);
      void retired.finally(() => this.retiring.delete(retired));
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown().finally(this.unrouteWarnings);
    return this.closing;
  }

  /**
   * Stops fetching, lets running handlers finish and BullMQ record their jobs finished (each
   * within RECORD_FINISHED_GRACE_MS), then closes the workers without BullMQ's own wait for
   * current jobs: after a Redis outage that wait never returns (BullMQ 5.x/6.x), and it has
   * nothing left to wait for by then.
   */
  private async shutdown(): Promise<void> {
    clearInterval(this.watchdog);
    const workers = [...this.workers.values()];
    await Promise.all(workers.map((w) => w.worker.pause(true)));
    await Promise.allSettled([...this.running]);
    this.producerClosed = true;
    await Promise.all(workers.map((w) => w.worker.close(true)));
    await Promise.allSettled([...this.retiring]);
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    // closeClient drops a client that never connected (status 'wait') and quits a ready one, all
    // at once: with Redis stalled each QUIT waits its second out, one per queue.
    await Promise.all([this.producer, ...workers.map((w) => w.client)].map(closeClient));
  }

  /**
   * A replaced worker: closed, and if that does not finish within RETIRE_WAIT_MS (a stuck one may
   * never answer), its connections dropped — BullMQ's own and its blocking duplicate — and the
   * client we gave it.
   */
  private async retire(old: ConsumerWorker): Promise<void> {
    const closed = old.worker.close(true).then(
      () => true,
      (err: unknown) => {
        this.onError(err);
        return false;
      },
    );
    const inTime = await Promise.race([closed, new Promise<false>((resolve) => setTimeout(() => resolve(false), RETIRE_WAIT_MS).unref())]);
    if (!inTime) await old.worker.disconnect().catch(this.onError);
    old.client.disconnect();
  }

  /**
   * Workers own their connections (BullMQ adds a blocking one), which must retry forever. Each is
   * handed over as a client built like every other one, so it follows a failover as they do: a
   * URL's reconnects on READONLY (a managed Redis that moved its address to the new primary left
   * a worker's connections on the demoted one, fetching no job until the watchdog replaced it),
   * a Sentinel set's follows +switch-master. BullMQ then leaves closing it to us.
   */
  private workerClient(): RedisClient {
    const client = createClient(this.opts, { lazyConnect: true, maxRetriesPerRequest: null });
    client.on('error', this.onError);
    return client;
  }

  async jobCounts(): Promise<QueueJobCount[]> {
    const states = ['waiting', 'active', 'delayed'] as const;
    const out: QueueJobCount[] = [];
    for (const kind of this.consumers.keys()) {
      const counts = await this.queue(kind).getJobCounts(...states);
      for (const state of states) out.push({ queue: kind, state, count: counts[state] ?? 0 });
    }
    return out;
  }

  private prefixOf(kind: string): string {
    return bullPrefix(this.opts.prefix, this.opts.clusterNodes === undefined ? undefined : kind);
  }

  private queue(kind: string): Queue {
    if (this.producerClosed) throw new Error('scheduler is closed');
    let queue = this.queues.get(kind);
    if (!queue) {
      queue = new Queue(kind, { connection: this.producer, prefix: this.prefixOf(kind), settings: { repeatStrategy: cronRepeatStrategy } });
      queue.on('error', this.onError);
      this.queues.set(kind, queue);
    }
    return queue;
  }
}

/**
 * Cron schedules' next times as the memory backend and the recurring service compute them
 * (nextCronTime), not with BullMQ's own copy of cron-parser: another version of it disagreed on
 * days whose DST change starts at midnight (a run skipped on Redis only), and it throws where
 * nextCronTime searches on (a worker that could not start).
 */
const cronRepeatStrategy: RepeatStrategy = (millis, opts) => nextCronTime({ cron: opts.pattern ?? '', timezone: opts.tz ?? 'UTC' }, millis);

function toJob(kind: string, job: BullJob): Job {
  const envelope = job.data as Envelope;
  // attemptsStarted also counts a rerun after a worker died mid-job, which attemptsMade does not.
  const attempt = Math.max(job.attemptsStarted, job.attemptsMade + 1);
  // attemptsMade counts only throws; a schedule's occurrence has one try.
  const lastTry = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const out: Job = { id: envelope.id, kind, data: envelope.data, attempt, lastTry, workerDeaths: job.stalledCounter };
  if (envelope.trace) out.trace = envelope.trace;
  if (envelope.link) out.traceLink = true;
  if (job.repeatJobKey !== undefined) out.scheduled = true;
  return out;
}

/** How long close() waits, after a handler settled, for BullMQ to record its job finished (it cannot while Redis is away). */
const RECORD_FINISHED_GRACE_MS = 2000;

function settleWithin(recorded: Promise<void>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, RECORD_FINISHED_GRACE_MS);
      void recorded.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
}

/** Whether a stored BullMQ schedule runs on `rule`'s timings. */
function sameTiming(stored: { every?: number | null; pattern?: string | null; tz?: string | null }, rule: RepeatRule): boolean {
  return 'everyMs' in rule ? stored.every === rule.everyMs : stored.pattern === rule.cron && (stored.tz ?? 'UTC') === rule.timezone;
}
