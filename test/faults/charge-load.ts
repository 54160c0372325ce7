import type { Cluster } from '../cluster/harness.js';
import { sampleAction } from '../support/start-gateway.js';

/** One answered dispatch of a charge load: when, its status and outcome, and what was sent. */
export interface Answer {
  at: number;
  status: number;
  id: string;
  tenant: string;
  outcome: string | undefined;
}

function charge(cluster: Cluster, id: string, tenant: string, dedupKey: string): Promise<Response> {
  return fetch(`${cluster.nextApi().url}/v1/dispatch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(sampleAction({ id, tenant, action_type: 'charge', dedup_key: dedupKey })),
  });
}

/**
 * Charges (dedup key = id, 16 tenants: many Redis Cluster slots) over `lanes`, round-robin over
 * the replicas, for `ms`: every answer, timed. A connection refused is status 0.
 */
export async function chargeLoad(cluster: Cluster, ms: number, lanes: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  const until = Date.now() + ms;
  let n = 0;
  const lane = async () => {
    while (Date.now() < until) {
      const i = n++;
      const id = `f-${i}`;
      const tenant = `t-${i % 16}`;
      const res = await charge(cluster, id, tenant, id).catch(() => null);
      const body = res === null ? null : ((await res.json().catch(() => null)) as { outcome?: string } | null);
      answers.push({ at: Date.now(), status: res?.status ?? 0, id, tenant, outcome: body?.outcome });
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return answers;
}

/** The longest time without a successful answer after `from` (the outage clients saw). */
export function outageAfter(answers: readonly Answer[], from: number): number {
  let last = from;
  let longest = 0;
  for (const at of answers
    .filter((a) => a.status === 200 && a.at >= from)
    .map((a) => a.at)
    .sort((x, y) => x - y)) {
    longest = Math.max(longest, at - last);
    last = at;
  }
  return longest;
}

/**
 * Charges each acknowledged one's dedup key again; returns what came back where it was not
 * `deduplicated` (a lost key, or an error answer: its status and body, to tell the two apart).
 */
export async function notDeduplicatedAgain(cluster: Cluster, acknowledged: readonly Answer[]): Promise<string[]> {
  const again = await Promise.all(
    acknowledged.map(async (a) => {
      const res = await charge(cluster, `${a.id}-again`, a.tenant, a.id);
      const body = (await res.json()) as { outcome?: string };
      return body.outcome === 'deduplicated' ? undefined : `${a.id}: ${res.status} ${JSON.stringify(body)}`;
    }),
  );
  return again.filter((o) => o !== undefined);
}

/** A tenant's count in the load's quota (`CHARGE_QUOTA`). */
export async function quotaUsed(cluster: Cluster, tenant: string): Promise<number> {
  const res = await fetch(`${cluster.nextApi().url}/v1/quotas/${CHARGE_QUOTA.id}/usage?namespace=payments&tenant=${tenant}`);
  const body = (await res.json()) as { used?: number };
  if (body.used === undefined) throw new Error(`usage of ${tenant}: ${res.status} ${JSON.stringify(body)}`);
  return body.used;
}

/** A per-tenant quota no charge load reaches: its window counters count every charge admitted. */
export const CHARGE_QUOTA = { id: 'charges', namespace: 'payments', tenant: '*', max_actions: 1_000_000_000, window: 'monthly' } as const;

/** The `lo-hi` range (or single slot) of `slots` that holds `slot`, as [lo, hi]. */
export function rangeOf(slots: readonly string[], slot: number): number[] | undefined {
  return slots.map((r) => r.split('-').map(Number)).find(([lo = 0, hi = lo]) => slot >= lo && slot <= hi);
}
