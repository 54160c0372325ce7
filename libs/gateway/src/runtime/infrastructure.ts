import { providerSecretsDecrypted } from './provider-secrets.js';
import { providerSlots } from './provider-slots.js';
import { logStateConnection } from './state-connection-log.js';
import { AUDIT_STATE_KINDS } from '@sluice/audit';
import { configureEvaluationLimits } from '@sluice/rules';
import type { Clock } from '@sluice/core';
import type { SluiceConfig } from '@sluice/config';
import { Executor, createProviders } from '@sluice/providers';
import { configSecret } from '@sluice/auth';
import { createScheduler, createStateStore, type RedisTarget } from '@sluice/state';
import type { Logger, Metrics, Tracer } from '@sluice/telemetry';
import { traceCarryingScheduler } from './trace-carrying-scheduler.js';
import { InternalEventBus } from '../events/internal-events.js';
import { GROUP_OUTBOX_KIND } from '../grouping/group-keys.js';
import { ProviderHealth } from '../resilience/provider-health.js';
import type { FeatureContext } from '../feature.js';

/** How long a scrape's PING may take before the backend counts as down (inside the scrape's own 1 s). */
const STATE_PING_WAIT_MS = 900;

/** A part to close on shutdown, named for the log when closing it fails. */
export interface Closer {
  name: string;
  close(): Promise<void>;
}

/**
 * The shared parts every feature builds on: state store, scheduler, providers, executor and the
 * internal event bus. Returns them with their closers, in the order they must be closed.
 */
export async function createInfrastructure(
  config: SluiceConfig,
  opts: { logger: Logger; metrics: Metrics; clock: Clock; tracer?: Tracer | undefined },
): Promise<{ ctx: FeatureContext; closers: Closer[] }> {
  const { logger, metrics, clock, tracer } = opts;
  // Before any feature compiles a rule or a silence: the limits apply to both.
  configureEvaluationLimits({
    regexMaxInputLength: config.rules.regex_max_input_length,
    celMaxCost: config.rules.cel_max_cost,
    celMaxDurationMs: config.rules.cel_max_duration_ms,
  });
  const closers: Closer[] = [];
  const redis = redisTargetOf(config.state);
  const state = await createStateStore({
    backend: config.state.backend,
    ...redis,
    prefix: config.state.prefix,
    clock,
    sweepIntervalMs: config.state.memory_sweep_interval_seconds * 1000,
    memoryLimits: {
      maxKeys: config.state.memory_max_keys,
      maxBytes: config.state.memory_max_bytes,
      exemptKinds: AUDIT_STATE_KINDS,
      drainKinds: [GROUP_OUTBOX_KIND],
    },
    onHandlerError: (channel, err) => logger.error({ err, channel }, 'state subscriber failed'),
    waitReplicas: {
      replicas: config.state.wait_replicas,
      timeoutMs: config.state.wait_timeout_ms,
      onShort: () => metrics.stateReplicationShort.inc(),
    },
    allowEviction: config.state.allow_eviction,
  });
  const unwatch = logStateConnection(state, logger);
  closers.unshift({
    name: 'state',
    close: () => {
      unwatch();
      return state.close();
    },
  });
  const bytesByKind = state.storedBytesByKind?.bind(state);
  if (bytesByKind) metrics.trackMemoryStore(bytesByKind);
  try {
    const scheduler = await createScheduler({
      backend: config.state.backend,
      ...redis,
      prefix: config.state.prefix,
      clock,
      lockDurationMs: config.worker.lock_duration_ms,
      stalledIntervalMs: config.worker.stalled_interval_ms,
      onError: (err, { suppressed }) => logger.warn({ err, suppressed }, 'scheduler'),
    });
    // Each closer is registered as soon as its part exists, so a failure further down still closes it.
    // Closing runs scheduler first (it waits for running jobs), then providers, then state.
    closers.unshift({ name: 'scheduler', close: () => scheduler.close() });
    // Queue depths, for scaling workers: only a process that consumes reports any.
    metrics.trackQueues(() => scheduler.jobCounts());
    // Read at each scrape, not from requests: a replica /ready took out of its Service gets none.
    metrics.refreshOnScrape(async () => metrics.stateBackendUp.set((await state.ping(STATE_PING_WAIT_MS)) ? 1 : 0));
    const log = logger.child({ component: 'provider' });
    const providers = createProviders(providerSecretsDecrypted(config.providers), {
      log: (level, obj, msg) => log[level](obj, msg),
      maxJsonDepth: config.server.max_json_depth,
    });
    closers.splice(1, 0, { name: 'providers', close: () => providers.close() });
    // Provider attempts are counted twice: Prometheus (this process) and the shared health window (every replica).
    const health = new ProviderHealth({ state, clock, logger, flushIntervalMs: 1000 });
    health.start();
    closers.splice(1, 0, { name: 'provider health', close: () => health.close() });
    const executor = new Executor({
      maxRetries: config.executor.max_retries,
      timeoutMs: config.executor.timeout_seconds * 1000,
      maxConcurrent: config.executor.max_concurrent,
      providerConcurrency: providerSlots(config.providers, config.executor.max_concurrent),
      backoffBaseMs: config.executor.backoff_base_ms,
      backoffMaxMs: config.executor.backoff_max_ms,
      metrics: {
        observe: (provider, result, ms) => {
          metrics.observe(provider, result, ms);
          health.observe(provider, result, ms);
        },
      },
    });
    const events = new InternalEventBus({
      onEmit: (type) => metrics.internalEvents.inc({ type }),
      onListenerError: (err, event) => logger.error({ err, type: event.type }, 'internal event listener failed'),
    });
    const jobs = tracer ? traceCarryingScheduler(scheduler) : scheduler;
    return { ctx: { config, clock, logger, metrics, state, scheduler: jobs, providers, executor, health, events, tracer }, closers };
  } catch (err) {
    await closeAll(closers, logger);
    throw err;
  }
}

/** A part still closing after this long is named in a warning: a shutdown that hangs says where. */
const SLOW_CLOSE_MS = 10_000;

/** Closes every part even when an earlier one fails (say, Redis is gone), logging each failure. */
export async function closeAll(closers: readonly Closer[], logger: Logger, slowMs = SLOW_CLOSE_MS): Promise<void> {
  for (const part of closers) {
    const started = performance.now();
    logger.debug({ part: part.name }, 'closing');
    const slow = setTimeout(() => logger.warn({ part: part.name, waited_ms: slowMs }, 'still closing'), slowMs);
    try {
      await part.close();
      logger.debug({ part: part.name, ms: Math.round(performance.now() - started) }, 'closed');
    } catch (err) {
      logger.warn({ err, part: part.name }, 'close failed; continuing shutdown');
    } finally {
      clearTimeout(slow);
    }
  }
}

/** Where the configured Redis is: a Cluster, a Sentinel set, or the single primary of `state.url`. */
function redisTargetOf(state: SluiceConfig['state'], env: NodeJS.ProcessEnv = process.env): RedisTarget {
  const password = configSecret(state.password, state.password_env, 'state.password_env', env);
  const commandTimeoutMs = state.command_timeout_ms;
  if (state.cluster !== undefined) return { clusterNodes: state.cluster.nodes, password, commandTimeoutMs };
  if (state.sentinels !== undefined) {
    const sentinelPassword = configSecret(state.sentinel_password, state.sentinel_password_env, 'state.sentinel_password_env', env);
    return { sentinels: state.sentinels, sentinelName: state.name, password, sentinelPassword, commandTimeoutMs };
  }
  return { url: state.url, commandTimeoutMs };
}
