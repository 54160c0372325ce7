import { systemClock, type Clock } from '@sluice/core';
import type { SluiceConfig } from '@sluice/config';
import type { RuleActionType } from '@sluice/rules';
import { Executor, createProviders, type Provider, type ProviderRegistry } from '@sluice/providers';
import { createScheduler, createStateStore, type Scheduler, type StateStore } from '@sluice/state';
import type { Logger, Metrics } from '@sluice/telemetry';
import { createAudit, type AuditParts } from './audit/create-audit.js';
import { InternalEventBus } from './events/internal-events.js';
import { Gateway } from './gateway.js';
import { Pipeline } from './pipeline/pipeline.js';
import type { RuleActionHandler } from './rule-actions/rule-action-handler.js';
import { configQuotaPolicies } from './quotas/quota-config.js';
import { QuotaRepository } from './quotas/quota-repository.js';
import { RetentionReaper } from './retention/retention-reaper.js';
import { RetentionRepository } from './retention/retention-repository.js';
import { RuleRepository } from './rules/rule-repository.js';
import { executeStage } from './stages/execute-stage.js';
import { quotaStage } from './stages/quota-stage.js';
import { rulesStage } from './stages/rules-stage.js';
import { StateMachineRegistry, StateMachineService, stateMachineRuleAction } from './state-machines/index.js';
import { RecurringService } from './recurring/recurring-service.js';
import { GroupService, groupRuleAction } from './grouping/index.js';

/** Everything one process shares: built once at start-up from the validated config. */
export interface Runtime {
  config: SluiceConfig;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  state: StateStore;
  scheduler: Scheduler;
  providers: ProviderRegistry;
  rules: RuleRepository;
  quotas: QuotaRepository;
  retention: RetentionRepository;
  reaper: RetentionReaper;
  audit: AuditParts;
  /** What background work reports (the SSE stream's internal source). */
  events: InternalEventBus;
  /** Event lifecycles: the state_machine rule action, /v1/events and state timeouts. */
  stateMachines: StateMachineService;
  /** Recurring (cron) actions: CRUD, pause/resume, and the occurrence job handler. */
  recurring: RecurringService;
  /** Event grouping: the group rule action, /v1/groups and the flush jobs. */
  grouping: GroupService<Provider>;
  gateway: Gateway;
  /** Closes scheduler (waits for running jobs), providers and state, in that order. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  logger: Logger;
  metrics: Metrics;
  clock?: Clock;
}

export async function createRuntime(config: SluiceConfig, opts: RuntimeOptions): Promise<Runtime> {
  const clock = opts.clock ?? systemClock;
  const { logger, metrics } = opts;
  // Checked before anything connects: duplicate ids or scope pairs stop start-up, naming them.
  const quotaPolicies = configQuotaPolicies(config.quotas.policies);
  const state = await createStateStore({
    backend: config.state.backend,
    url: config.state.url,
    prefix: config.state.prefix,
    clock,
    sweepIntervalMs: config.state.memory_sweep_interval_seconds * 1000,
    deferred: {
      onApplied: ({ left, failed }) => {
        opts.metrics.deferredQueueLength.set(left);
        if (failed > 0) opts.metrics.deferredWritesFailed.inc(failed);
      },
      onError: (err) => opts.logger.error({ err }, 'deferred writes'),
    },
  });
  const scheduler = await createScheduler({
    backend: config.state.backend,
    url: config.state.url,
    prefix: config.state.prefix,
    lockDurationMs: config.worker.lock_duration_ms,
    stalledIntervalMs: config.worker.stalled_interval_ms,
    onError: (err, { suppressed }) => logger.warn({ err, suppressed }, 'scheduler'),
  });
  const log = logger.child({ component: 'provider' });
  const providers = createProviders(config.providers, { log: (obj) => log.info(obj, 'log provider') });
  const executor = new Executor({
    maxRetries: config.executor.max_retries,
    timeoutMs: config.executor.timeout_seconds * 1000,
    maxConcurrent: config.executor.max_concurrent,
    backoffBaseMs: config.executor.backoff_base_ms,
    backoffMaxMs: config.executor.backoff_max_ms,
    metrics,
  });
  const events = new InternalEventBus({
    onEmit: (type) => metrics.internalEvents.inc({ type }),
    onListenerError: (err, event) => logger.error({ err, type: event.type }, 'internal event listener failed'),
  });
  const rules = new RuleRepository({
    state,
    directory: config.rules.directory,
    // Neither the plugin runtime nor an embedding provider exists yet: rules needing them fail to load, saying so.
    env: { wasmRuntime: false, embeddingProvider: false },
    logger,
    syncIntervalMs: config.rules.sync_interval_seconds * 1000,
  });
  await rules.start();
  const quotas = new QuotaRepository({ state, clock, logger, policies: quotaPolicies });
  await quotas.start();
  const retention = new RetentionRepository({ state, clock, logger });
  await retention.start();
  const audit = createAudit(config, { state, clock, logger, metrics, retention });
  const reaper = new RetentionReaper({
    retention,
    clock,
    logger,
    metrics,
    audit: audit.store ?? undefined,
    immutableAudit: audit.compliance.immutable_audit,
  });
  // Rule actions of the background features (group, state_machine...), each set where its feature is built.
  const featureHandlers: Partial<Record<RuleActionType, RuleActionHandler>> = {};
  const stateMachines = new StateMachineService({ state, scheduler, clock, logger, events, machines: new StateMachineRegistry(config.state_machines) });
  featureHandlers.state_machine = stateMachineRuleAction(stateMachines);
  reaper.register(stateMachines.retentionSource());
  const grouping = new GroupService<Provider>({
    state,
    scheduler,
    clock,
    providers,
    executor,
    events,
    logger,
    // One delivery may take every executor attempt and backoff; after that its holder is presumed dead.
    leaseMs: config.executor.timeout_seconds * 1000 * (config.executor.max_retries + 1) + config.executor.backoff_max_ms * config.executor.max_retries + 5000,
    onFlush: (result) => metrics.groupFlushes.inc({ result }),
    onDropped: (count) => metrics.groupEventsDropped.inc(count),
  });
  featureHandlers.group = groupRuleAction(grouping);
  // The gateway is built last; features that dispatch (flushes, recurring actions) reach it through this.
  let built: Gateway | undefined;
  const gatewayRef = (): Gateway => {
    if (!built) throw new Error('gateway used before start-up finished');
    return built;
  };
  const recurring = new RecurringService({
    state,
    scheduler,
    clock,
    logger,
    events,
    gateway: gatewayRef,
    maxPerTenant: config.background.max_recurring_actions_per_tenant,
  });
  const pipeline = new Pipeline([
    quotaStage({ quotas, state, clock, logger, onExceeded: (policy, behavior) => metrics.quotaExceeded.inc({ policy: policy.id, behavior }) }),
    rulesStage({
      rules,
      state,
      clock,
      logger,
      onRuleError: (rule) => metrics.ruleErrors.inc({ rule: rule.name }),
      handlers: featureHandlers,
      currentState: (ctx) => stateMachines.currentState(ctx.action),
    }),
    executeStage<Provider>(providers, executor),
  ]);
  const gateway = new Gateway({ pipeline, clock, recorder: metrics, providerExists: (name) => providers.has(name), ...(audit.recorder ? { audit: audit.recorder } : {}) });
  built = gateway;

  return {
    config,
    clock,
    logger,
    metrics,
    state,
    scheduler,
    providers,
    rules,
    quotas,
    retention,
    reaper,
    audit,
    events,
    stateMachines,
    recurring,
    grouping,
    gateway,
    async close() {
      // Every part gets its chance to close even when an earlier one fails (say, Redis is gone).
      const parts = { retention, quotas, rules, scheduler, providers, state };
      for (const [name, part] of Object.entries(parts)) {
        try {
          await part.close();
        } catch (err) {
          logger.warn({ err, part: name }, 'close failed; continuing shutdown');
        }
      }
    },
  };
}
