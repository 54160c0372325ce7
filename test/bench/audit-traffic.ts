/**
 * The synthetic audit traffic of the scale scripts (audit-scale.ts on Redis,
 * audit-postgres-scale.ts on PostgreSQL): records as the gateway writes them, for AUDIT_TENANTS
 * tenants (Zipf-distributed, default 200) from a seeded generator (AUDIT_SEED, default 1), and
 * the latency summary both report.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { NewAuditRecord } from '@sluice/core';
import { prng } from '../support/prng.js';

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw.replaceAll('_', ''));
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Synthetic traffic
// ---------------------------------------------------------------------------------------------

export const TENANTS = envInt('AUDIT_TENANTS', 200);
export const SEED = envInt('AUDIT_SEED', 1);

export const rand = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
export const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

function weighted<T>(entries: readonly (readonly [T, number])[]): () => T {
  const total = entries.reduce((s, [, w]) => s + w, 0);
  return () => {
    let r = rand() * total;
    for (const [value, w] of entries) {
      r -= w;
      if (r < 0) return value;
    }
    return (entries.at(-1) as readonly [T, number])[0];
  };
}

/** Lognormal around a median (ms), for durations. */
function lognormal(median: number, sigma: number): number {
  const u = Math.max(rand(), 1e-12);
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  return median * Math.exp(sigma * z);
}

const NAMESPACES = ['billing', 'notifications', 'ops', 'growth'] as const;
const PROVIDERS: Record<string, readonly string[]> = {
  email: ['send_invoice', 'send_receipt', 'password_reset', 'newsletter'],
  sms: ['send_otp', 'delivery_update'],
  slack: ['post_alert', 'post_message'],
  webhook: ['order_created', 'order_updated', 'payment_failed'],
  pagerduty: ['trigger_incident', 'resolve_incident'],
  teams: ['post_message'],
};
const PROVIDER_NAMES = Object.keys(PROVIDERS);
const OUTCOMES = ['executed', 'suppressed', 'deduplicated', 'throttled', 'failed', 'rerouted'] as const;
type Outcome = (typeof OUTCOMES)[number];
const nextOutcome = weighted<Outcome>([
  ['executed', 82],
  ['suppressed', 5],
  ['deduplicated', 5],
  ['throttled', 4],
  ['failed', 3],
  ['rerouted', 1],
]);
const VERDICT_OF: Record<Outcome, string> = {
  executed: 'allow',
  suppressed: 'suppress',
  deduplicated: 'deduplicate',
  throttled: 'throttle',
  failed: 'allow',
  rerouted: 'reroute',
};
const WORDS = 'invoice order payment shipped delayed account alert disk latency queue backlog renewal trial upgrade customer report weekly monthly'.split(' ');

export interface Tenant {
  namespace: string;
  tenant: string;
  providers: string[];
  callers: string[];
}

export const tenants: Tenant[] = Array.from({ length: TENANTS }, (_, i) => {
  const shuffled = [...PROVIDER_NAMES].sort(() => rand() - 0.5);
  const name = `tenant-${String(i).padStart(4, '0')}`;
  return {
    namespace: NAMESPACES[i % NAMESPACES.length] as string,
    tenant: name,
    providers: shuffled.slice(0, 2 + Math.floor(rand() * 3)),
    callers: [`${name}-svc`, `${name}-batch`, `ops.${name}@example.com`],
  };
});

/** Zipf (s = 1) over tenants: tenant i gets a share proportional to 1/(i+1). */
export const tenantCdf = (() => {
  const weights = tenants.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
})();

function nextTenant(): Tenant {
  const r = rand();
  let lo = 0;
  let hi = tenantCdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (r <= (tenantCdf[mid] ?? 1)) hi = mid;
    else lo = mid + 1;
  }
  return tenants[lo] as Tenant;
}

function payloadFor(provider: string, actionType: string, t: Tenant): Record<string, unknown> {
  const customer = `cust-${Math.floor(rand() * 1e6)}`;
  const base = {
    template: `${actionType}_v${1 + Math.floor(rand() * 3)}`,
    locale: pick(['en-US', 'en-GB', 'de-DE', 'fr-FR', 'es-ES']),
    customer: { id: customer, tier: pick(['free', 'pro', 'enterprise']) },
    vars: {
      reference: `${actionType.slice(0, 3).toUpperCase()}-${Math.floor(rand() * 1e8)}`,
      amount: Math.round(rand() * 1e6) / 100,
      currency: pick(['EUR', 'USD', 'GBP']),
      url: `https://app.example.com/${t.tenant}/r/${hex(8)}`,
    },
  };
  switch (provider) {
    case 'email':
      return { to: `${customer}@mail.example.com`, subject: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} notice`, ...base };
    case 'sms':
      return { to: `+4915${Math.floor(1e8 + rand() * 9e8)}`, text: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`, ...base };
    default:
      return {
        channel: `#${t.tenant}-${pick(WORDS)}`,
        title: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`,
        severity: pick(['info', 'warning', 'critical']),
        ...base,
      };
  }
}

function outcomeDetails(outcome: Outcome, provider: string, rule: string | null): Record<string, unknown> {
  switch (outcome) {
    case 'executed':
      return { status: 'success' };
    case 'suppressed':
      return { rule, reason: 'matched suppression rule' };
    case 'deduplicated':
      return {};
    case 'throttled':
      return { rule, message: 'rate limit exceeded', retry_after_seconds: 1 + Math.floor(rand() * 60) };
    case 'failed':
      return {
        error: { code: pick(['TIMEOUT', 'CONNECTION', 'EXECUTION_FAILED']), message: `${provider} did not answer in time`, retryable: true, attempts: 3 },
      };
    case 'rerouted':
      return { original_provider: provider, new_provider: 'webhook', status: 'success' };
  }
}

export function draftAt(dispatchedMs: number): NewAuditRecord {
  const t = nextTenant();
  const provider = pick(t.providers);
  const actionType = pick(PROVIDERS[provider] ?? ['unknown']);
  const outcome = nextOutcome();
  const ruled = outcome !== 'executed' && outcome !== 'failed' ? true : rand() < 0.05;
  const verdict = outcome === 'executed' && ruled ? 'modify' : VERDICT_OF[outcome];
  const matchedRule = ruled ? `${t.namespace}-${verdict}-${Math.floor(rand() * 8)}` : null;
  const callsProvider = outcome === 'executed' || outcome === 'failed' || outcome === 'rerouted';
  const duration = callsProvider ? (outcome === 'failed' ? 5000 + lognormal(200, 0.5) : lognormal(120, 0.7)) : lognormal(1.5, 0.5);
  const durationMs = Math.round(duration * 1000) / 1000;
  const caller = pick(t.callers);
  return {
    action_id: randomUUID(),
    chain_id: null,
    trace_id: null,
    namespace: t.namespace,
    tenant: t.tenant,
    provider,
    action_type: actionType,
    verdict,
    matched_rule: matchedRule,
    outcome,
    action_payload: payloadFor(provider, actionType, t),
    verdict_details: { verdict },
    outcome_details: outcomeDetails(outcome, provider, matchedRule),
    metadata: { labels: { team: t.namespace, env: 'prod' }, trace_id: hex(16) },
    dispatched_at: new Date(dispatchedMs).toISOString(),
    completed_at: new Date(dispatchedMs + Math.round(duration)).toISOString(),
    duration_ms: durationMs,
    expires_at: null,
    caller_id: caller,
    auth_method: caller.includes('@') ? 'jwt' : 'api_key',
  };
}

// ---------------------------------------------------------------------------------------------
// Measurement helpers
// ---------------------------------------------------------------------------------------------

export interface Latency {
  iterations: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  mean_ms: number;
  max_ms: number;
}

export function summarize(samplesMs: ArrayLike<number>): Latency {
  const sorted = Float64Array.from(samplesMs).sort();
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  let sum = 0;
  for (const x of sorted) sum += x;
  return {
    iterations: sorted.length,
    p50_ms: round(at(50)),
    p95_ms: round(at(95)),
    p99_ms: round(at(99)),
    mean_ms: round(sum / sorted.length),
    max_ms: round(sorted[sorted.length - 1] ?? NaN),
  };
}

export const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
