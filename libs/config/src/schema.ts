import { ChainDefinition, MAX_RETENTION_SECONDS, QuotaMaxActions, durationSeconds } from '@sluice/core';
import { z } from 'zod';
import { StateMachinesConfig } from './state-machines-schema.js';

/**
 * The sluice.yaml schema. Every object is strict: an unknown key stops start-up with its path.
 * Defaults live here and nowhere else; docs/configuration.md mirrors this file (a test checks
 * that every leaf key is documented).
 */

const port = z.number().int().min(0).max(65535);
const positiveInt = z.number().int().positive();

const ServerConfig = z
  .strictObject({
    host: z.string().min(1).default('0.0.0.0'),
    port: port.default(8080),
    external_url: z.url().default('http://localhost:8080'),
    shutdown_timeout_seconds: positiveInt.default(30),
    /** After SIGTERM, how long /ready answers 503 while requests are still served, before the listener closes. */
    drain_delay_seconds: z.number().int().min(0).max(300).default(5),
    max_body_bytes: positiveInt.default(1_048_576),
    /** JSON bodies nested deeper are refused (400 naming the path) before anything else reads them. */
    max_json_depth: z.number().int().min(2).max(1000).default(64),
    max_sse_connections_per_tenant: positiveInt.default(10),
    /** Approval-link signing keys: the first signs, every one verifies (rotation). None: one random key kept in the state store. */
    approval_keys: z
      .array(z.strictObject({ id: z.string().min(1).max(128), secret: z.string().regex(/^([0-9a-fA-F]{2}){16,}$/, 'hex, at least 16 bytes') }))
      .default([]),
    /** A request whose body has not arrived within this is answered 408 and its connection closed (0 = no limit); see configuration.md. */
    request_timeout_seconds: z.number().int().min(0).default(60),
    /** The admin web UI at /ui/ (static files; every call it makes goes through the API's auth). */
    ui: z.boolean().default(true),
  })
  .prefault({});

/**
 * `redis://[[user]:password@]host[:port][/db]` or `rediss://…`. Checked here because the client
 * would take a mistyped one for a socket path and echo it, password and all, in its error; the
 * message never repeats the value.
 */
const RedisUrl = z.string().refine(
  (value) => {
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  },
  { message: 'must be a redis:// or rediss:// URL with a host (redis://[:password@]host[:port][/db])' },
);

/** `host:port` of a Redis node or Sentinel. */
const RedisNode = z.string().regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$/, 'host:port');

const StateConfig = z
  .strictObject({
    backend: z.enum(['memory', 'redis']).default('memory'),
    /** A single Redis primary (ignored when cluster or sentinels is set). */
    url: RedisUrl.default('redis://127.0.0.1:6379'),
    /** Redis Cluster: some of its nodes; the client discovers the rest. */
    cluster: z.strictObject({ nodes: z.array(RedisNode).min(1) }).optional(),
    /** Redis Sentinel: the Sentinels, and the name of the primary they monitor (`name`). */
    sentinels: z.array(RedisNode).min(1).optional(),
    name: z.string().min(1).default('mymaster'),
    /** The data nodes' password with cluster or sentinels (plain or `ENC[...]`); a URL carries its own. */
    password: z.string().min(1).optional(),
    /** Or the name of an env variable holding it. */
    password_env: z.string().min(1).optional(),
    /** The Sentinels' own password, when they require one (plain or `ENC[...]`). */
    sentinel_password: z.string().min(1).optional(),
    /** Or the name of an env variable holding it. */
    sentinel_password_env: z.string().min(1).optional(),
    /**
     * Writes that must survive a failover (dedup keys, approvals, quotas, throttles, chain and
     * record updates) are answered once this many replicas have them (Redis WAIT); 0 = do not wait.
     */
    wait_replicas: z.number().int().min(0).max(16).default(0),
    /** How long such a write waits for its replicas before it is answered anyway (and counted). */
    wait_timeout_ms: positiveInt.max(60_000).default(500),
    /**
     * A Redis command unanswered for this long fails (a request: 503 STATE_UNAVAILABLE, nothing
     * executed): a Redis that stalls with its connection open does not hold requests forever.
     */
    command_timeout_ms: positiveInt.min(100).max(60_000).default(5000),
    /**
     * Start on a Redis whose maxmemory-policy may evict keys (anything but noeviction). Off: such
     * a Redis is refused at start, since a full one would drop dedup keys, audit records and jobs.
     */
    allow_eviction: z.boolean().default(false),
    prefix: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only')
      .default('sluice'),
    /** Memory backend: how often expired entries are swept. */
    memory_sweep_interval_seconds: positiveInt.default(60),
    /** Memory backend: keys held outside the audit trail (dedup keys, windows, groups, …); new ones beyond it are refused (503). */
    memory_max_keys: positiveInt.default(1_000_000),
    /** Memory backend: characters of string values held outside the audit trail; writes beyond it are refused (503). */
    memory_max_bytes: positiveInt.default(64 * 1024 * 1024),
  })
  .refine((s) => s.cluster === undefined || s.sentinels === undefined, { message: 'state.cluster and state.sentinels exclude each other', path: ['cluster'] })
  .refine((s) => s.password === undefined || s.password_env === undefined, { message: 'set password or password_env, not both', path: ['password'] })
  .refine((s) => s.sentinel_password === undefined || s.sentinel_password_env === undefined, {
    message: 'set sentinel_password or sentinel_password_env, not both',
    path: ['sentinel_password'],
  })
  .refine((s) => s.sentinels !== undefined || (s.sentinel_password === undefined && s.sentinel_password_env === undefined), {
    message: 'is for state.sentinels only',
    path: ['sentinel_password'],
  })
  .prefault({});

const ProviderConfig = z.strictObject({
  name: z.string().min(1).max(256),
  type: z.enum(['noop', 'log', 'webhook']),
  url: z.url().optional(),
  headers: z.record(z.string(), z.string()).default({}),
  timeout_ms: positiveInt.optional(),
  /** Its calls in flight at once per process (within executor.max_concurrent); default half of that. */
  max_concurrent: positiveInt.optional(),
  /** When set, webhook bodies are signed: X-Sluice-Signature (the body), X-Sluice-Signature-Timestamped (`<X-Sluice-Timestamp>.<body>`). */
  hmac_secret: z.string().min(1).optional(),
  max_response_bytes: positiveInt.default(1_048_576),
});

const ExecutorConfig = z
  .strictObject({
    max_retries: z.number().int().min(0).max(20).default(3),
    timeout_seconds: z.number().positive().default(30),
    max_concurrent: positiveInt.default(64),
    backoff_base_ms: positiveInt.default(100),
    backoff_max_ms: positiveInt.default(10_000),
    /** Keep actions whose retryable failures outlive every retry, per tenant, for retry or drain (`/v1/dlq`). */
    dlq_enabled: z.boolean().default(false),
    /** Most entries one namespace and tenant keeps; failures beyond it are logged and counted, not queued. */
    dlq_max_entries_per_tenant: positiveInt.default(10_000),
  })
  .refine((e) => e.backoff_base_ms <= e.backoff_max_ms, {
    message: 'backoff_base_ms must not exceed backoff_max_ms (the cap on one retry delay)',
    path: ['backoff_base_ms'],
  })
  .prefault({});

const WorkerConfig = z
  .strictObject({
    /** Port of the worker's own /health, /ready and /metrics server (0 = ephemeral). */
    port: port.default(9091),
    host: z.string().min(1).default('0.0.0.0'),
    concurrency: positiveInt.default(8),
    /** How long a worker holds a job before BullMQ considers it stalled (its process died). */
    lock_duration_ms: positiveInt.default(30_000),
    stalled_interval_ms: positiveInt.default(30_000),
  })
  .prefault({});

const RulesConfig = z
  .strictObject({
    /** Directory of *.yaml / *.yml / *.cel rule files (non-recursive). None: API rules only. */
    directory: z.string().min(1).nullable().default(null),
    /** How often each replica checks the shared rule generation, as a backstop to pub/sub. */
    sync_interval_seconds: positiveInt.default(5),
    /** Longest string a regular expression scans (rules, expressions, silences); longer is an evaluation error. */
    regex_max_input_length: positiveInt.max(16 * 1024 * 1024).default(65_536),
    /** Cost units one CEL expression may spend per evaluation: an iteration is one, a regex scan its size × length / 4096. */
    cel_max_cost: positiveInt.max(100_000_000).default(100_000),
    /** Wall time one CEL evaluation may take; past it the rule errors. */
    cel_max_duration_ms: positiveInt.max(10_000).default(50),
    /** Wall time the rules of one request (a batch: of all its items) may take; past it the items left fail (RULE_LIMIT_EXCEEDED). */
    request_max_evaluation_ms: positiveInt.max(60_000).default(250),
  })
  .prefault({});

const SilencesConfig = z
  .strictObject({
    /** How often each replica checks the shared silence generation, as a backstop to pub/sub (the spec's 10 s). */
    sync_interval_seconds: positiveInt.default(10),
    /** How long an expired silence stays listable (include_expired) before the worker deletes it. */
    retention_seconds: positiveInt.default(7 * 86_400),
    /** How often the worker looks for expired silences past their retention. */
    reap_interval_seconds: positiveInt.default(3600),
  })
  .prefault({});

/** A field of the action an alert becomes: a fixed value, or an alert label's value (with a fallback when the alert lacks it). */
const AlertField = z.union([z.string().min(1), z.strictObject({ label: z.string().min(1), default: z.string().min(1).optional() })]);

const AlertRoute = z.strictObject({
  /** Labels the alert must carry with exactly these values for the route to take it; none: every alert. */
  match: z.record(z.string(), z.string()).default({}),
  namespace: AlertField,
  tenant: AlertField,
  provider: AlertField,
  action_type: AlertField.default({ label: 'alertname' }),
});

/** Alertmanager compatibility (docs/alertmanager.md): Prometheus and amtool as clients. */
const AlertmanagerConfig = z
  .strictObject({
    /** Which action each alert becomes: the first route whose `match` holds. An alert no route takes is refused. */
    routes: z.array(AlertRoute).default([]),
    /** The namespace and tenant amtool's silences live in (`/api/v2/silences`); null: that API answers 404. */
    silences: z
      .strictObject({ namespace: z.string().min(1), tenant: z.string().min(1) })
      .nullable()
      .default(null),
  })
  .prefault({});

const TimeIntervalsConfig = z
  .strictObject({
    /** How often each replica checks the shared time-interval generation, as a backstop to pub/sub (the spec's 30 s). */
    sync_interval_seconds: positiveInt.default(30),
  })
  .prefault({});

const ChainsConfig = z
  .strictObject({
    /** Chain definitions (read-only through the API); cross-checks (providers, sub-chains, cycles) run at start-up. */
    definitions: z.array(ChainDefinition).default([]),
    /** The response bodies one run keeps (JSON bytes): every later step's payload carries them all. */
    max_output_bytes: z.number().int().min(1024).max(67_108_864).default(1_048_576),
  })
  .prefault({});

const BreakerOverride = z.strictObject({
  failure_threshold: positiveInt.optional(),
  success_threshold: positiveInt.optional(),
  recovery_timeout_seconds: positiveInt.optional(),
  /** Where calls go while this provider's breaker is open (its own breaker applies in turn). */
  fallback_provider: z.string().min(1).max(256).optional(),
});

const CircuitBreakerConfig = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** Consecutive retryable failures (after the executor's retries) that open a closed breaker. */
    failure_threshold: positiveInt.default(5),
    /** Probe successes that close a half-open breaker. */
    success_threshold: positiveInt.default(2),
    /** How long an open breaker rejects calls before it lets one probe through. */
    recovery_timeout_seconds: positiveInt.default(60),
    /** Per-provider overrides, by provider name (each must be configured). */
    providers: z.record(z.string(), BreakerOverride).default({}),
  })
  .prefault({});

const StreamConfig = z
  .strictObject({
    /** Off: GET /v1/stream answers 503. */
    enabled: z.boolean().default(true),
    /** cluster: a subscriber sees every replica's and worker's events (Redis pub/sub); local: its own process's only. Memory mode is always local. */
    scope: z.enum(['cluster', 'local']).default('cluster'),
    /** A keep-alive comment this often (the spec's 15 s). */
    keep_alive_seconds: positiveInt.default(15),
    /** A connection's slot in its tenant's count lives this long unless its replica renews it (a dead replica's slots free after it). */
    lease_ttl_seconds: positiveInt.default(30),
    /** Events held for a client that is not reading; beyond it they are skipped and the client gets `lagged`. */
    max_queued_events: positiveInt.default(256),
  })
  .prefault({});

const BusConfig = z
  .strictObject({
    /** Off: every /v1/bus route answers 503. */
    enabled: z.boolean().default(false),
    /** Each topic's log keeps about this many messages (Redis Streams `MAXLEN ~`). */
    max_len: positiveInt.default(100_000),
    /** Compiled schema validators kept per process (least recently used dropped). */
    validator_cache_size: positiveInt.default(1000),
    /** A message handed to a consumer and not acknowledged within this goes to the next consumer that asks. */
    visibility_timeout_seconds: positiveInt.default(30),
    /** Deliveries after which an unacknowledged message moves to the subscription's dead-letter stream. */
    max_deliveries: positiveInt.default(5),
  })
  .prefault({});

/** An outbound credential: `api_key` (plain or `ENC[...]`, decrypted with SLUICE_AUTH_KEY) or the name of an env variable holding it. */
const OutboundKey = {
  api_key: z.string().min(1).optional(),
  api_key_env: z.string().min(1).optional(),
};

const EmbeddingConfig = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** An OpenAI-compatible API base: `<endpoint>/embeddings` is called. */
    endpoint: z.url().default('http://127.0.0.1:11434/v1'),
    model: z.string().min(1).default('text-embedding-3-small'),
    ...OutboundKey,
    timeout_seconds: z.number().positive().default(10),
    /** An embedding failure: true → similarity 0 (the rule does not match); false → the dispatch fails. */
    fail_open: z.boolean().default(true),
    topic_cache_capacity: positiveInt.default(10_000),
    topic_cache_ttl_seconds: positiveInt.default(3600),
    text_cache_capacity: positiveInt.default(1000),
    text_cache_ttl_seconds: positiveInt.default(60),
  })
  .prefault({});

const GuardrailEvaluator = z.strictObject({
  /** What the evaluator is asked to flag (its system prompt). */
  policy: z.string().min(1).max(16_384),
  model: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: positiveInt.optional(),
});

const LlmGuardrailConfig = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** An OpenAI-compatible API base: `<endpoint>/chat/completions` is called. */
    endpoint: z.url().default('http://127.0.0.1:11434/v1'),
    model: z.string().min(1).default('gpt-4o-mini'),
    ...OutboundKey,
    /** The `default` evaluator's policy. */
    policy: z.string().min(1).max(16_384).default('Flag actions that are abusive, fraudulent, or leak credentials or personal data.'),
    temperature: z.number().min(0).max(2).default(0),
    max_tokens: positiveInt.default(256),
    timeout_seconds: z.number().positive().default(10),
    /** A failed evaluation (timeout, error, malformed answer): true → the action goes on unchecked; false → the dispatch fails. */
    fail_open: z.boolean().default(false),
    /** Named evaluators (`evaluator_name` of a rule); `default` is the policy above unless redefined here. */
    evaluators: z.record(z.string().min(1).max(128), GuardrailEvaluator).default({}),
  })
  .prefault({});

const WasmConfig = z
  .strictObject({
    /** Directory of `<name>.wasm` plugins, loaded at start-up; none: `wasm_plugin` rules do not load. */
    plugin_dir: z.string().min(1).nullable().default(null),
    /** Most linear memory a plugin may declare (and grow to). */
    memory_limit_mb: positiveInt.default(16),
    /** A call running longer is stopped (its thread terminated) and gives the safe default: no match. */
    cpu_limit_ms: positiveInt.default(100),
    /** Worker threads running plugin calls, one call each at a time. */
    pool_size: positiveInt.default(2),
  })
  .prefault({});

const AuthConfig = z
  .strictObject({
    /** Off: every request acts as an anonymous admin with a wildcard grant. */
    enabled: z.boolean().default(false),
    /** Credentials YAML (settings, users, api_keys); required when enabled. */
    file: z.string().min(1).nullable().default(null),
    /** Re-read the credentials file when it changes (keys and users; the JWT secret is fixed at start-up). */
    watch: z.boolean().default(true),
    /**
     * Password logins of one username, counted across replicas: after `max_attempts` without a
     * success within `window_seconds`, the username's logins are refused (429) until the window ends.
     */
    login_throttle: z
      .strictObject({
        max_attempts: positiveInt.max(10_000).default(10),
        window_seconds: positiveInt.max(86_400).default(300),
      })
      .prefault({}),
  })
  .prefault({})
  .refine((a) => !a.enabled || a.file !== null, { message: 'auth.enabled needs auth.file (the credentials file)', path: ['file'] });

const QuotaWindow = z.enum(['hourly', 'daily', 'weekly', 'monthly']);

export const QuotaPolicyConfig = z.strictObject({
  id: z.string().min(1).max(256),
  namespace: z.string().min(1).max(256),
  tenant: z.string().min(1).max(256),
  max_actions: QuotaMaxActions,
  window: QuotaWindow,
  overage_behavior: z.enum(['block', 'warn']).default('block'),
  enabled: z.boolean().default(true),
  description: z.string().max(1024).optional(),
});
export type QuotaPolicyConfig = z.infer<typeof QuotaPolicyConfig>;

const QuotasConfig = z
  .strictObject({
    policies: z.array(QuotaPolicyConfig).default([]),
  })
  .prefault({});

const RateTier = z.strictObject({
  requests_per_window: positiveInt,
  window_seconds: positiveInt.default(60),
});

export const RateLimitConfig = z
  .strictObject({
    enabled: z.boolean().default(false),
    /** Per authenticated caller (API key name, username, or "anonymous"). */
    per_caller: RateTier.default({ requests_per_window: 1000, window_seconds: 60 }),
    /** Per tenant named by the request (dispatched actions' tenants). */
    per_tenant: RateTier.default({ requests_per_window: 10_000, window_seconds: 60 }),
    /** Per-caller and per-tenant exceptions, by name. */
    caller_overrides: z.record(z.string(), RateTier).default({}),
    tenant_overrides: z.record(z.string(), RateTier).default({}),
  })
  .prefault({});

export type RateLimitConfig = z.infer<typeof RateLimitConfig>;

const AuditPostgresConfig = z
  .strictObject({
    /** postgres://user:password@host:port/database; plain or `ENC[...]` (decrypted with SLUICE_AUTH_KEY). */
    url: z.string().min(1).optional(),
    /** Or the name of an env variable holding the URL. */
    url_env: z.string().min(1).optional(),
    /** The schema holding the trail's tables (created by the migrations). */
    schema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lowercase identifier: letters, digits and _, at most 63')
      .default('sluice_audit'),
    /** Connections per process. */
    pool_size: positiveInt.max(100).default(10),
    /** One partition per UTC day of dispatched_at (the only layout so far). */
    partition: z.enum(['daily']).default('daily'),
    /** Daily partitions created ahead of today. */
    partitions_ahead_days: positiveInt.max(90).default(7),
  })
  .refine((c) => c.url === undefined || c.url_env === undefined, { message: 'set url or url_env, not both' })
  .prefault({});

export const AuditConfig = z
  .strictObject({
    enabled: z.boolean().default(true),
    /** Where the trail is kept: the state backend (memory or Redis), or PostgreSQL (`postgres`), fed through the state backend. */
    backend: z.enum(['state', 'postgres']).default('state'),
    /** Gateway-wide record lifetime; a retention policy's audit_ttl_seconds overrides it per tenant. */
    ttl_seconds: durationSeconds(MAX_RETENTION_SECONDS).default(2_592_000),
    store_payload: z.boolean().default(true),
    /** Payload paths (dot-separated, e.g. `card.number`) replaced by `placeholder` before storing. */
    redact: z
      .strictObject({
        fields: z.array(z.string().min(1).max(256)).default([]),
        placeholder: z.string().max(256).default('[REDACTED]'),
      })
      .prefault({}),
    /** Memory backend only: records kept in the process; the oldest are evicted beyond it. */
    memory_max_records: positiveInt.default(100_000),
    /**
     * Memory backend only: characters of stored records (their JSON) kept in the process; the
     * oldest are evicted beyond it. The process holds about 5x this in heap with the indexes (docs/operations.md#memory).
     */
    memory_max_bytes: positiveInt.default(16 * 1024 * 1024),
    /** Records held in the process when their write fails (Redis away), written when it answers again; oldest dropped beyond. */
    spool_max_records: positiveInt.max(1_000_000).default(10_000),
    /** After this long an unrecorded provider call gets an `unknown` record; default: every attempt timing out, with backoffs, plus 30 s. */
    unknown_after_seconds: positiveInt.max(86_400).optional(),
    /** Shared state: records an indexer reads and indexes per batch. */
    index_batch_size: positiveInt.max(5000).default(500),
    /** Shared state: a batch held this long by a silent indexer (its process died) is taken over by another. */
    index_claim_after_seconds: positiveInt.max(3600).default(10),
    /** Life of the daily analytics rollups (daily/weekly/monthly analytics, rule coverage) after their day ends. */
    analytics_retention_days: positiveInt.default(400),
    /** Life of the hourly analytics rollups (~24x the keys of the daily ones); capped at analytics_retention_days. */
    analytics_hourly_retention_days: positiveInt.default(35),
    /** The PostgreSQL database of the audit trail (docs/audit-postgres.md): `sluice migrate` prepares its schema. */
    postgres: AuditPostgresConfig,
  })
  .refine((c) => c.backend !== 'postgres' || c.postgres.url !== undefined || c.postgres.url_env !== undefined, {
    message: 'audit.backend postgres needs audit.postgres.url or audit.postgres.url_env',
    path: ['postgres', 'url'],
  })
  .prefault({});
export type AuditConfig = z.infer<typeof AuditConfig>;

export const ComplianceConfig = z
  .strictObject({
    mode: z
      .string()
      .transform((s) => s.toLowerCase())
      .pipe(z.enum(['none', 'soc2', 'hipaa']))
      .default('none'),
    /** Overrides of the mode's presets. */
    sync_audit_writes: z.boolean().optional(),
    immutable_audit: z.boolean().optional(),
    hash_chain: z.boolean().optional(),
  })
  .prefault({});
export type ComplianceConfig = z.infer<typeof ComplianceConfig>;

export const BackgroundConfig = z
  .strictObject({
    enable_retention_reaper: z.boolean().default(true),
    retention_check_interval_seconds: positiveInt.default(3600),
    /** How often a worker looks for provider calls whose process died before recording them (Redis only). */
    intent_sweep_interval_seconds: positiveInt.max(3600).default(10),
    /** How often a worker checks that Redis still holds the repeatable schedules (a FLUSHALL drops them without a reconnect). */
    schedule_check_interval_seconds: positiveInt.max(3600).default(60),
    /** Most recurring actions one (namespace, tenant) pair may hold; a create beyond it is a 409. */
    max_recurring_actions_per_tenant: positiveInt.default(100),
  })
  .prefault({});
export type BackgroundConfig = z.infer<typeof BackgroundConfig>;

/** OpenTelemetry tracing (docs/tracing.md). Unset keys fall back to the standard OTEL_* environment variables. */
const TracingConfig = z
  .strictObject({
    enabled: z.boolean().default(false),
    exporter: z.enum(['otlp-http', 'otlp-grpc', 'console', 'none']).default('otlp-http'),
    /** The collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT's meaning): otlp-http posts to <endpoint>/v1/traces. */
    endpoint: z.url().optional(),
    /** Default: OTEL_SERVICE_NAME, else `sluice`. */
    service_name: z.string().min(1).max(256).optional(),
    /** Share of new traces sampled; a request with a sampled parent is always traced. Default: OTEL_TRACES_SAMPLER_ARG, else 1. */
    sample_ratio: z.number().min(0).max(1).optional(),
    /** Sent with every export (an API key of a hosted collector); default: OTEL_EXPORTER_OTLP_HEADERS. */
    headers: z.record(z.string(), z.string()).default({}),
  })
  .prefault({});

const TelemetryConfig = z.strictObject({ tracing: TracingConfig }).prefault({});

const LoggingConfig = z
  .strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .prefault({});

export const SluiceConfig = z
  .strictObject({
    server: ServerConfig,
    state: StateConfig,
    providers: z
      .array(ProviderConfig)
      .default([])
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((p, i) => {
          if (seen.has(p.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate provider name "${p.name}"` });
          seen.add(p.name);
          if (p.type === 'webhook' && !p.url) ctx.addIssue({ code: 'custom', path: [i, 'url'], message: 'a webhook provider needs a url' });
        });
      }),
    executor: ExecutorConfig,
    rules: RulesConfig,
    silences: SilencesConfig,
    alertmanager: AlertmanagerConfig,
    time_intervals: TimeIntervalsConfig,
    chains: ChainsConfig,
    circuit_breaker: CircuitBreakerConfig,
    stream: StreamConfig,
    bus: BusConfig,
    embedding: EmbeddingConfig,
    llm_guardrail: LlmGuardrailConfig,
    wasm: WasmConfig,
    auth: AuthConfig,
    quotas: QuotasConfig,
    rate_limit: RateLimitConfig,
    audit: AuditConfig,
    compliance: ComplianceConfig,
    background: BackgroundConfig,
    state_machines: StateMachinesConfig,
    worker: WorkerConfig,
    logging: LoggingConfig,
    telemetry: TelemetryConfig,
  })
  .superRefine((config, ctx) => {
    // A call still in flight would be given an `unknown` record while its process is alive.
    const { unknown_after_seconds: after } = config.audit;
    const longestCall = longestProviderCallSeconds(config.executor);
    if (after !== undefined && after < longestCall)
      ctx.addIssue({
        code: 'custom',
        path: ['audit', 'unknown_after_seconds'],
        message: `must be at least ${longestCall} (every attempt of executor timing out, with the longest backoffs): a live call would be recorded unknown`,
      });
  });

export type SluiceConfig = z.infer<typeof SluiceConfig>;

/** The longest a provider call can take, retries included: every attempt timing out, with the longest backoffs. */
export function longestProviderCallSeconds(executor: { max_retries: number; timeout_seconds: number; backoff_max_ms: number }): number {
  return (executor.max_retries + 1) * executor.timeout_seconds + Math.ceil((executor.max_retries * executor.backoff_max_ms) / 1000);
}
