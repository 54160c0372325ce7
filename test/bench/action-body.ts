import { createHash } from 'node:crypto';

/**
 * The request bodies every scenario sends. One action shape for all of them (the baseline
 * validates the same JSON against the same schema), so scenarios differ only in what the
 * server does with it.
 */

/** A realistic action: a few hundred bytes, nested payload, labels. No id: the server assigns one. */
export const SAMPLE_ACTION = {
  namespace: 'billing',
  tenant: 'acme',
  provider: 'email',
  action_type: 'send_invoice',
  payload: {
    subject: 'Your invoice for March',
    amount: 1250.5,
    tags: ['invoice', 'monthly'],
    customer: { email: 'ap@customer.example', tier: 'gold' },
    items: [
      { sku: 'A-1', quantity: 3 },
      { sku: 'B-2', quantity: 1 },
    ],
    region: 'eu',
  },
  metadata: { env: 'prod', team: 'finance', labels: { env: 'prod' } },
} as const;

export const BATCH_SIZE = 100;

/**
 * How the load driver builds bodies (serializable: it crosses a process boundary).
 * - fixed: the same bytes for every request;
 * - batch: `{actions: [SAMPLE_ACTION × size]}`, the same bytes for every request;
 * - unique-dedup: SAMPLE_ACTION with a fresh `dedup_key` per request, except that every
 *   `repeatEvery`-th request reuses the previous key (so the deduplicated path runs too, while
 *   most requests take the write path and leave a live dedup key behind);
 * - tenants: SAMPLE_ACTION from `count` tenants in turn, named like opaque tenant ids (the hex of
 *   a hash), so a Redis Cluster spreads them over its slots as real tenants would.
 */
export type BodySpec =
  | { kind: 'fixed' }
  | { kind: 'batch'; size: number }
  | { kind: 'unique-dedup'; repeatEvery: number; runId: string }
  | { kind: 'tenants'; count: number };

export function fixedBody(spec: BodySpec): string | undefined {
  if (spec.kind === 'fixed') return JSON.stringify(SAMPLE_ACTION);
  if (spec.kind === 'batch') return JSON.stringify({ actions: Array.from({ length: spec.size }, () => SAMPLE_ACTION) });
  return undefined;
}

/** A body generator for specs whose bodies vary per request (call once per request). */
export function bodyGenerator(spec: BodySpec, startAt = 0): () => string {
  const fixed = fixedBody(spec);
  if (fixed !== undefined) return () => fixed;
  if (spec.kind === 'tenants') {
    const bodies = benchTenants(spec.count).map((tenant) => JSON.stringify({ ...SAMPLE_ACTION, tenant }));
    let n = startAt;
    return () => bodies[n++ % bodies.length] as string;
  }
  if (spec.kind !== 'unique-dedup') throw new Error(`unhandled body spec ${spec.kind}`);
  // Split the static JSON around the dedup key so each request only concatenates strings.
  const marker = '\u0000DEDUP\u0000';
  const template = JSON.stringify({ ...SAMPLE_ACTION, dedup_key: marker });
  const [head, tail] = template.split(JSON.stringify(marker));
  let n = startAt;
  let last = '';
  return () => {
    n++;
    if (last === '' || n % spec.repeatEvery !== 0) last = `order-${spec.runId}-${n}`;
    return `${head}"${last}"${tail}`;
  };
}

/** The tenants of a `tenants` body: `t-` and 12 hex digits of SHA-256 over `tenant <i>`. */
function benchTenants(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `t-${createHash('sha256').update(`tenant ${i}`).digest('hex').slice(0, 12)}`);
}

/** Actions a request of this spec dispatches. */
export function actionsPerRequest(spec: BodySpec): number {
  return spec.kind === 'batch' ? spec.size : 1;
}
