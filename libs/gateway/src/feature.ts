import type { Clock } from '@sluice/core';
import type { SluiceConfig } from '@sluice/config';
import type { Executor, ProviderRegistry } from '@sluice/providers';
import type { RuleActionType } from '@sluice/rules';
import type { Job, Scheduler, StateStore } from '@sluice/state';
import type { Logger, Metrics, Tracer } from '@sluice/telemetry';
import type { InternalEventBus } from './events/internal-events.js';
import type { ProviderHealth } from './resilience/provider-health.js';
import type { Gateway } from './gateway.js';
import type { Stage } from './pipeline/stage.js';
import type { RetentionSource } from './retention/retention-source.js';
import type { RuleActionHandler } from './rule-actions/rule-action-handler.js';

/** What every feature may build on: the process's shared parts, made before any feature. */
export interface FeatureContext {
  config: SluiceConfig;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  state: StateStore;
  scheduler: Scheduler;
  providers: ProviderRegistry;
  executor: Executor;
  /** Provider call statistics shared by every replica (fed by the executor). */
  health: ProviderHealth;
  /** What background work reports (the SSE stream's internal source). */
  events: InternalEventBus;
  /** Set with tracing on: job handlers run in spans continuing their enqueuer's trace. */
  tracer?: Tracer | undefined;
}

/** What a job handler gets besides its job: parts built after the features (the gateway dispatches through all of them). */
interface JobEnv {
  gateway: Gateway;
}

export interface JobDefinition {
  /** Parallel jobs of this kind per worker process. */
  concurrency: number;
  /** Calls one lib function; throws to have the scheduler retry. Logging and metrics are wrapped around it once, by the worker. */
  handler(job: Job, env: JobEnv): Promise<void>;
}

/**
 * What one feature contributes to a process, declared once. The runtime builder collects these:
 * stages into the pipeline (in spec order), rule actions into the rules stage's handler map, job
 * kinds into the worker's consumers. Nothing is registered later and no shared map is changed.
 */
export interface Feature {
  readonly name: string;
  /** Its steps of the dispatch pipeline (each placed by its name, see stage-order.ts). */
  readonly stages?: readonly Stage[];
  /** The rule actions it implements (the others answer "not available"). */
  readonly ruleActions?: Partial<Record<RuleActionType, RuleActionHandler>>;
  /** Its job kinds, keyed by durable queue name (never rename one without a migration: queued jobs would be orphaned). */
  readonly jobs?: Readonly<Record<string, JobDefinition>>;
  /** What the retention reaper deletes of it per tenant, once older than a policy's TTL. */
  readonly retentionSources?: readonly RetentionSource[];
  /** Run by every process that consumes jobs, before it starts: its repeatable schedules, or ones Redis lost. */
  declareSchedules?(): Promise<void>;
  /**
   * Run at every schedule check (background.schedule_check_interval_seconds) by processes that
   * consume jobs: re-declares what a process that died between a write and its schedule left
   * undeclared, or a schedule whose next run BullMQ dropped. Returns how many it knows it repaired.
   */
  repairSchedules?(): Promise<number>;
  /** Started by every process that consumes jobs: long-running loops of its own (the audit indexer), stopped by close(). */
  startBackground?(): void;
  /** Stops what it runs (syncs, timers); the builder closes features in reverse order. */
  close?(): Promise<void>;
}

/**
 * A fixed schedule's declaration, run again at every schedule check: upserting an unchanged
 * schedule adds no run, but puts back its next one where BullMQ dropped it (its worker does on an
 * error other than a lost connection, "the next repeatable job will not be scheduled"), which
 * nothing else would: the declared-marker is still there (a pending run is re-added in place,
 * costing a few writes). `onlyIfUnchanged`: a schedule declared with other timings (another
 * version of a rolling deploy) is left as it is. Cannot tell whether it repaired.
 */
export function redeclared(declare: (onlyIfUnchanged: true) => Promise<unknown>): () => Promise<number> {
  return async () => {
    await declare(true);
    return 0;
  };
}
