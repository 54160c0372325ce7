/**
 * The scenario table of issue 7, plus the silence pair (i, j): the dispatch hot path with no
 * silences and with 1 020. Every scenario POSTs SAMPLE_ACTION-shaped JSON; auth is off,
 * the provider is the noop provider, audit is on (the default), logging is the default (info,
 * one line per request, written to a file).
 */
import { BATCH_SIZE, type BodySpec } from './action-body.js';
import type { RuleSetName } from './rules-fixture.js';
import type { SilenceSpec } from './silences-fixture.js';

/** (m) is not a load scenario: the heap per retained audit record (audit-heap.ts), selected with the rest by --only. */
export const SCENARIO_IDS = ['a', 'x', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'p', 'r', 'v', 'w', 's', 't', 'm'] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number];

export interface Scenario {
  id: ScenarioId;
  title: string;
  /** baseline: bare Fastify (test/bench/baseline-server.ts); sluice: the built CLI. */
  server: 'baseline' | 'sluice';
  /** Baseline only: microseconds of CPU spun in each request (the calibration scenario). */
  baselineWorkUs?: number;
  backend: 'memory' | 'redis' | null;
  /** API replicas; 2 means `serve --no-worker` ×2 + `sluice worker` behind the round-robin proxy. */
  replicas: 1 | 2;
  rules: RuleSetName;
  /** Active silences created over HTTP after start-up (test/bench/silences-fixture.ts); null: none. */
  silences: SilenceSpec | null;
  path: '/v1/dispatch' | '/v1/dispatch/batch';
  body: BodySpec;
  connections: number;
  /** The outcome a fresh request must get (checked once before the warm-up). */
  expectOutcome: 'executed' | 'suppressed' | 'baseline';
  /** Tracing on (every trace sampled, exported to a local OTLP collector); off when absent. */
  tracing?: boolean;
  /** The audit trail in a private PostgreSQL (audit.backend: postgres); the state backend's when absent. */
  auditPostgres?: boolean;
  /** Redis: a private 3-primary Redis Cluster instead of one redis-server. */
  redisCluster?: boolean;
  /** Redis: a private primary, one replica and three Sentinels instead of one redis-server, and state.wait_replicas. */
  redisSentinel?: { waitReplicas: number };
  /** After the measured run, an open-loop run at OPEN_LOOP_SHARE of its throughput, for latency at a load the server can carry. */
  openLoop?: boolean;
  /** A soak (soak.ts): minutes of open loop at OPEN_LOOP_SHARE of a short closed-loop run's throughput, memory sampled. */
  soak?: boolean;
}

/** The open-loop run's offered load, as a share of the closed-loop run's measured throughput. */
export const OPEN_LOOP_SHARE = 0.5;

/** The open loop's rate after a closed-loop run that answered `ok` requests in `durationS`. */
export function openLoopRate(run: { ok: number; durationS: number }): number {
  return Math.max(1, Math.round((OPEN_LOOP_SHARE * run.ok) / run.durationS));
}

const DEFAULT_CONNECTIONS = 50;
const BATCH_CONNECTIONS = 10;

/** Dedup scenarios: one request in 10 repeats the previous key (deduplicated); 9 in 10 write a new key. */
const DEDUP_REPEAT_EVERY = 10;

/**
 * The calibration scenario (x): the baseline plus this much CPU per request. On the 2-vCPU machine
 * of docs/performance.md it reaches ≈ 0.43× of (a): a ratio target above that cannot be met by a
 * server that adds this much work per request to bare Fastify, whatever the work is.
 */
const CALIBRATION_WORK_US = 50;

/** Tenants of the Redis Cluster scenario (r). */
const CLUSTER_TENANTS = 24;

/** The silence scenario: 1 000 silences the action's scope does not include, 20 that it does (none matching). */
const SILENCES: SilenceSpec = { otherScopes: 1000, ownScope: 20 };

export function scenarioTable(runId: string): Scenario[] {
  const single = { path: '/v1/dispatch', connections: DEFAULT_CONNECTIONS, replicas: 1, silences: null } as const;
  const fixed: BodySpec = { kind: 'fixed' };
  const dedup: BodySpec = { kind: 'unique-dedup', repeatEvery: DEDUP_REPEAT_EVERY, runId };
  return [
    { ...single, id: 'a', title: 'bare Fastify, same body + schema', server: 'baseline', backend: null, rules: 'none', body: fixed, expectOutcome: 'baseline' },
    {
      ...single,
      id: 'x',
      title: `bare Fastify + ${CALIBRATION_WORK_US} µs of CPU per request`,
      server: 'baseline',
      baselineWorkUs: CALIBRATION_WORK_US,
      backend: null,
      rules: 'none',
      body: fixed,
      expectOutcome: 'baseline',
      openLoop: true,
    },
    {
      ...single,
      id: 'b',
      title: 'memory, no rules, audit on',
      server: 'sluice',
      backend: 'memory',
      rules: 'none',
      body: fixed,
      expectOutcome: 'executed',
      openLoop: true,
    },
    {
      ...single,
      id: 'c',
      title: 'memory, 100 miss + 1 suppress',
      server: 'sluice',
      backend: 'memory',
      rules: 'miss100-suppress',
      body: fixed,
      expectOutcome: 'suppressed',
    },
    { ...single, id: 'd', title: 'memory, dedup rule', server: 'sluice', backend: 'memory', rules: 'dedup', body: dedup, expectOutcome: 'executed' },
    {
      ...single,
      id: 'e',
      title: 'redis, 1 replica, no rules',
      server: 'sluice',
      backend: 'redis',
      rules: 'none',
      body: fixed,
      expectOutcome: 'executed',
      openLoop: true,
    },
    { ...single, id: 'f', title: 'redis, dedup rule', server: 'sluice', backend: 'redis', rules: 'dedup', body: dedup, expectOutcome: 'executed' },
    {
      ...single,
      id: 'g',
      title: `memory, batch of ${BATCH_SIZE}, ${BATCH_CONNECTIONS} connections`,
      server: 'sluice',
      backend: 'memory',
      rules: 'none',
      path: '/v1/dispatch/batch',
      body: { kind: 'batch', size: BATCH_SIZE },
      // 10 batches in flight are already 1 000 actions (the server runs 8 per batch at a time);
      // 50 would queue 5 000 and push the slowest batches past the client's 10 s timeout.
      connections: BATCH_CONNECTIONS,
      expectOutcome: 'executed',
    },
    {
      ...single,
      id: 'h',
      title: 'redis, 2 replicas + proxy',
      server: 'sluice',
      backend: 'redis',
      replicas: 2,
      rules: 'none',
      body: fixed,
      expectOutcome: 'executed',
    },
    // (r) is (h) on a 3-primary Redis Cluster: Redis CPU summed over the primaries, and each one's share. Its
    // actions come from 24 tenants: a tenant's keys share one slot (its atomic decisions need it), so the load of
    // one tenant lands on one primary whatever the Cluster's size.
    {
      ...single,
      id: 'r',
      title: 'redis cluster (3 primaries), 2 replicas + proxy, 24 tenants',
      server: 'sluice',
      backend: 'redis',
      redisCluster: true,
      replicas: 2,
      rules: 'none',
      body: { kind: 'tenants', count: CLUSTER_TENANTS },
      expectOutcome: 'executed',
    },
    // (v, w): (f) behind Sentinels, without and with state.wait_replicas: 1 (each dedup key waits for the replica).
    {
      ...single,
      id: 'v',
      title: 'redis behind Sentinels, dedup rule',
      server: 'sluice',
      backend: 'redis',
      redisSentinel: { waitReplicas: 0 },
      rules: 'dedup',
      body: dedup,
      expectOutcome: 'executed',
    },
    {
      ...single,
      id: 'w',
      title: 'redis behind Sentinels, dedup rule, wait_replicas 1',
      server: 'sluice',
      backend: 'redis',
      redisSentinel: { waitReplicas: 1 },
      rules: 'dedup',
      body: dedup,
      expectOutcome: 'executed',
    },
    // (i) is (b) again, run next to (j) so that (j) / (i) compares runs a minute apart, not minutes.
    { ...single, id: 'i', title: 'memory, no silences', server: 'sluice', backend: 'memory', rules: 'none', body: fixed, expectOutcome: 'executed' },
    {
      ...single,
      id: 'j',
      title: `memory, ${SILENCES.otherScopes} silences elsewhere + ${SILENCES.ownScope} in scope`,
      server: 'sluice',
      backend: 'memory',
      rules: 'none',
      silences: SILENCES,
      body: fixed,
      expectOutcome: 'executed',
    },
    // (k) is (b) with tracing on: docs/tracing.md promises at most 15 % off (b).
    {
      ...single,
      id: 'k',
      title: 'memory, tracing on (sample 1, OTLP/HTTP)',
      server: 'sluice',
      backend: 'memory',
      rules: 'none',
      body: fixed,
      expectOutcome: 'executed',
      tracing: true,
    },
    {
      ...single,
      id: 'l',
      title: 'bare Fastify + the tracing of (k)',
      server: 'baseline',
      backend: null,
      rules: 'none',
      body: fixed,
      expectOutcome: 'baseline',
      tracing: true,
    },
    // (s) and (t) are soaks (soak.ts): (b) and (e) held at half their throughput for minutes, memory sampled.
    {
      ...single,
      id: 's',
      title: 'soak: memory, no rules',
      server: 'sluice',
      backend: 'memory',
      rules: 'none',
      body: fixed,
      expectOutcome: 'executed',
      soak: true,
    },
    {
      ...single,
      id: 'p',
      title: 'redis, 1 replica, no rules, audit trail in PostgreSQL',
      server: 'sluice',
      backend: 'redis',
      rules: 'none',
      body: fixed,
      expectOutcome: 'executed',
      auditPostgres: true,
    },
    {
      ...single,
      id: 't',
      title: 'soak: redis, 1 replica',
      server: 'sluice',
      backend: 'redis',
      rules: 'none',
      body: fixed,
      expectOutcome: 'executed',
      soak: true,
    },
  ];
}
