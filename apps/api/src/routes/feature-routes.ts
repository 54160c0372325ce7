import type { Features, Runtime } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { analyticsRoutes } from './analytics.js';
import { approvalsRoutes } from './approvals.js';
import type { RateLimiter } from '../rate-limiter.js';
import { auditRoutes } from './audit.js';
import { eventsRoutes } from './events.js';
import { chainsRoutes } from './chains.js';
import { circuitBreakersRoutes } from './circuit-breakers.js';
import { providersHealthRoutes } from './providers-health.js';
import { streamRoutes } from './stream.js';
import { busRoutes } from './bus.js';
import { embeddingsRoutes } from './embeddings.js';
import { pluginsRoutes } from './plugins.js';
import { deadLettersRoutes } from './dead-letters.js';
import { groupsRoutes } from './groups.js';
import { quotasRoutes } from './quotas.js';
import { recurringRoutes } from './recurring.js';
import { retentionRoutes } from './retention.js';
import { rulesRoutes } from './rules.js';
import { rulesCoverageRoutes } from './rules-coverage.js';
import { silencesRoutes } from './silences.js';
import { timeIntervalsRoutes } from './time-intervals.js';

/** What the feature routes read of the runtime. */
export type RoutesRuntime = Pick<
  Runtime,
  | 'clock'
  | 'gateway'
  | 'rules'
  | 'quotas'
  | 'retention'
  | 'audit'
  | 'stateMachines'
  | 'recurring'
  | 'grouping'
  | 'silences'
  | 'timeIntervals'
  | 'deadLetters'
  | 'approvals'
  | 'chainDefinitions'
  | 'chainRuns'
  | 'breakers'
  | 'providersHealth'
  | 'stream'
  | 'bus'
  | 'embeddings'
  | 'plugins'
  | 'state'
>;

/** What the API itself gives the feature routes beside the runtime. */
interface RoutesApi {
  /** Per-tenant request limits: anything that dispatches again (a replay, a DLQ retry) counts there as a dispatch does. */
  rateLimiter: RateLimiter;
}

type RegisterRoutes = (app: FastifyInstance, runtime: RoutesRuntime, api: RoutesApi) => PromiseLike<unknown>;

/**
 * Each feature's HTTP routes, by feature name. Keyed by `Features`, so a feature added to the
 * runtime's list does not compile here until it says which routes it has (none is `[]`).
 */
export const FEATURE_ROUTES: Readonly<Record<keyof Features, readonly RegisterRoutes[]>> = {
  quotas: [(app, rt) => app.register(quotasRoutes, { quotas: rt.quotas })],
  retention: [(app, rt) => app.register(retentionRoutes, { retention: rt.retention })],
  audit: [
    (app, rt, api) => app.register(auditRoutes, { store: rt.audit.store, compliance: rt.audit.compliance, gateway: rt.gateway, rateLimiter: api.rateLimiter }),
    (app, rt) => app.register(analyticsRoutes, { analytics: rt.audit.analytics, clock: rt.clock }),
  ],
  stateMachines: [(app, rt) => app.register(eventsRoutes, { stateMachines: rt.stateMachines })],
  grouping: [(app, rt) => app.register(groupsRoutes, { grouping: rt.grouping })],
  recurring: [(app, rt) => app.register(recurringRoutes, { recurring: rt.recurring })],
  approvals: [(app, rt) => app.register(approvalsRoutes, { approvals: rt.approvals, gateway: rt.gateway })],
  chains: [(app, rt) => app.register(chainsRoutes, { definitions: rt.chainDefinitions, runs: rt.chainRuns })],
  reaper: [],
  embeddings: [(app, rt) => app.register(embeddingsRoutes, { embeddings: rt.embeddings, state: rt.state })],
  plugins: [(app, rt) => app.register(pluginsRoutes, { plugins: rt.plugins })],
  llmGuardrail: [],
  silences: [(app, rt) => app.register(silencesRoutes, { silences: rt.silences })],
  timeIntervals: [(app, rt) => app.register(timeIntervalsRoutes, { timeIntervals: rt.timeIntervals })],
  rules: [
    (app, rt) => app.register(rulesRoutes, { rules: rt.rules, clock: rt.clock, silences: rt.silences, timeIntervals: rt.timeIntervals }),
    (app, rt) => app.register(rulesCoverageRoutes, { coverage: rt.audit.coverage, rules: rt.rules, clock: rt.clock }),
  ],
  deadLetters: [(app, rt, api) => app.register(deadLettersRoutes, { queue: rt.deadLetters, gateway: rt.gateway, rateLimiter: api.rateLimiter })],
  resilience: [
    (app, rt) => app.register(circuitBreakersRoutes, { breakers: rt.breakers }),
    (app, rt) => app.register(providersHealthRoutes, { providersHealth: rt.providersHealth }),
  ],
  stream: [(app, rt) => app.register(streamRoutes, { stream: rt.stream })],
  bus: [(app, rt) => app.register(busRoutes, { bus: rt.bus })],
  execute: [],
};
