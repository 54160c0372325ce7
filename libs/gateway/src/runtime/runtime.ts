import { systemClock, type Clock, type ProviderHealthEntry } from '@sluice/core';
import type { SluiceConfig } from '@sluice/config';
import type { Provider } from '@sluice/providers';
import type { Logger, Metrics, Tracer } from '@sluice/telemetry';
import type { AuditParts } from '../audit/create-audit.js';
import type { Feature, FeatureContext, JobDefinition } from '../feature.js';
import { Gateway } from '../gateway.js';
import type { GroupService } from '../grouping/group-service.js';
import { tracedStage } from '../pipeline/traced-stage.js';
import type { Stage } from '../pipeline/stage.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { checkQuotasConfig } from '../quotas/quotas-feature.js';
import type { QuotaRepository } from '../quotas/quota-repository.js';
import type { RecurringService } from '../recurring/recurring-service.js';
import type { RetentionReaper } from '../retention/retention-reaper.js';
import type { RetentionRepository } from '../retention/retention-repository.js';
import type { RuleRepository } from '../rules/rule-repository.js';
import type { ApprovalService } from '../approvals/approval-service.js';
import type { ChainDefinitions } from '../chains/chain-definitions.js';
import type { ChainRuns } from '../chains/chain-runs.js';
import type { CircuitBreakers } from '../resilience/circuit-breakers.js';
import type { StreamService } from '../stream/stream-service.js';
import type { BusService } from '../bus/bus-service.js';
import type { EmbeddingService } from '../guardrails/embedding-service.js';
import type { PluginRegistry } from '../plugins/plugin-registry.js';
import type { DeadLetterQueue } from '../dead-letters/dead-letter-queue.js';
import type { SilenceService } from '../silences/silence-service.js';
import type { StateMachineService } from '../state-machines/state-machine-service.js';
import type { TimeIntervalService } from '../time-intervals/time-interval-service.js';
import { buildFeatures, jobsOf, type Features } from './features.js';
import { ScheduleKeeper } from './schedule-keeper.js';
import { closeAll, createInfrastructure, type Closer } from './infrastructure.js';

/** Everything one process shares: the shared parts, every feature, the gateway. Built once at start-up from the validated config, never changed after. */
export interface Runtime extends FeatureContext {
  features: Features;
  /** The services of the features the apps use most, by their feature's name. */
  rules: RuleRepository;
  quotas: QuotaRepository;
  retention: RetentionRepository;
  reaper: RetentionReaper;
  audit: AuditParts;
  stateMachines: StateMachineService;
  recurring: RecurringService;
  grouping: GroupService<Provider>;
  silences: SilenceService;
  timeIntervals: TimeIntervalService;
  approvals: ApprovalService;
  chainDefinitions: ChainDefinitions;
  chainRuns: ChainRuns;
  /** Null while circuit breakers are off. */
  breakers: CircuitBreakers | null;
  providersHealth: () => Promise<ProviderHealthEntry[]>;
  /** Null while `stream.enabled` is off. */
  stream: StreamService | null;
  /** Null while `bus.enabled` is off. */
  bus: BusService | null;
  /** Null while `embedding.enabled` is off. */
  embeddings: EmbeddingService | null;
  /** Null without `wasm.plugin_dir`. */
  plugins: PluginRegistry | null;
  /** Null while `executor.dlq_enabled` is off. */
  deadLetters: DeadLetterQueue | null;
  /** The dispatch entry point: the features' stages in spec order. */
  gateway: Gateway;
  /** Every feature's job kinds, by durable queue name: what a worker consumes. */
  jobs: Readonly<Record<string, JobDefinition>>;
  /** Each feature's repeatable schedules (and ones a new Redis lost): run by every process that consumes jobs. Declared again when Redis loses them (ScheduleKeeper). */
  declareSchedules(): Promise<void>;
  /** Each feature's background loops: started by every process that consumes jobs. */
  startBackground(): void;
  /** Closes the features (newest first), then scheduler (waits for running jobs), providers and state. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  logger: Logger;
  metrics: Metrics;
  clock?: Clock;
  /** With tracing on (docs/tracing.md): dispatch, batch, stage and job spans, and trace context in job data. */
  tracer?: Tracer | undefined;
}

/**
 * The stages that get a span of their own: the ones that decide most dispatches or do the I/O
 * (Redis, the provider). A span for each of the others would cost more than it tells; so would
 * one for a traced stage with nothing to do for the action (Stage.idle).
 */
const TRACED_STAGES: ReadonlySet<string> = new Set(['quota', 'rules', 'rule_action', 'execute']);

function traced(stage: Stage, tracer: Tracer): Stage {
  return TRACED_STAGES.has(stage.name) ? tracedStage(stage, tracer) : stage;
}

/** The one runtime builder both apps compose on: shared parts, then the features, then the gateway over their stages. */
export async function createRuntime(config: SluiceConfig, opts: RuntimeOptions): Promise<Runtime> {
  const clock = opts.clock ?? systemClock;
  const { logger, metrics, tracer } = opts;
  checkQuotasConfig({ config });
  const { ctx, closers } = await createInfrastructure(config, { logger, metrics, clock, tracer });
  const closeFeature = (feature: Feature): void => {
    const { close } = feature;
    if (close) closers.unshift({ name: feature.name, close } satisfies Closer);
  };
  let features: Features;
  try {
    features = await buildFeatures(ctx, closeFeature);
  } catch (err) {
    await closeAll(closers, logger);
    throw err;
  }
  const all: Feature[] = Object.values(features);
  const schedules = new ScheduleKeeper({
    state: ctx.state,
    clock,
    logger,
    checkIntervalMs: config.background.schedule_check_interval_seconds * 1000,
    declare: async () => {
      for (const feature of all) await feature.declareSchedules?.();
    },
    repair: async () => {
      for (const feature of all) await feature.repairSchedules?.();
    },
  });
  closers.unshift({ name: 'schedule-keeper', close: async () => schedules.stop() });
  const stages = all.flatMap((f) => f.stages ?? []);
  const pipeline = new Pipeline(tracer ? stages.map((s) => traced(s, tracer)) : stages);
  const audit = features.audit.parts;
  const gateway = new Gateway({
    pipeline,
    clock,
    recorder: metrics,
    providerExists: (name) => ctx.providers.has(name),
    stateAvailable: () => ctx.state.available(),
    onItemError: (err) => logger.error({ err }, 'batch item failed'),
    tracer,
    events: ctx.events,
    ...(audit.recorder ? { audit: audit.recorder } : {}),
  });
  return {
    ...ctx,
    features,
    rules: features.rules.repository,
    quotas: features.quotas.repository,
    retention: features.retention.repository,
    reaper: features.reaper.reaper,
    audit,
    stateMachines: features.stateMachines.service,
    recurring: features.recurring.service,
    grouping: features.grouping.service,
    silences: features.silences.service,
    timeIntervals: features.timeIntervals.service,
    deadLetters: features.deadLetters.queue,
    approvals: features.approvals.service,
    chainDefinitions: features.chains.definitions,
    chainRuns: features.chains.runs,
    breakers: features.resilience.breakers,
    providersHealth: features.resilience.providersHealth,
    stream: features.stream.stream,
    bus: features.bus.bus,
    embeddings: features.embeddings.service,
    plugins: features.plugins.registry,
    gateway,
    jobs: jobsOf(all),
    declareSchedules: () => schedules.declare(),
    startBackground() {
      for (const feature of all) feature.startBackground?.();
      schedules.watch();
    },
    close: () => closeAll(closers, logger),
  };
}
