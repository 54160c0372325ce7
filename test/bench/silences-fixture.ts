/**
 * Silences for the silence scenarios, created the way an operator creates them
 * (`POST /v1/silences`, see docs/silences.md) after the gateway has started and before the
 * warm-up. SAMPLE_ACTION (namespace billing, tenant acme, labels `{env: prod}`) must still
 * execute, while every silence of its scope is tested on each dispatch (the worst case for the
 * hot path):
 *
 * - in its own tenant, silences whose first matcher holds on its labels and whose second does
 *   not, so both run (the AND stops at the first matcher that fails); half are `equal` then
 *   `regex`, half `regex` then `equal`;
 * - in other scopes, silences that would suppress it were they in its scope (so a scope leak
 *   fails the sanity check instead of going unnoticed): 90 % in other tenants of its namespace
 *   (among them its child `acme.eu` and the look-alike `acme-eu`, neither of which covers
 *   `acme`), 10 % in tenant `acme` of other namespaces.
 */
import { SAMPLE_ACTION } from './action-body.js';

/** How many active silences a scenario creates, and where (serializable, like BodySpec). */
export interface SilenceSpec {
  /** In scopes that do not cover SAMPLE_ACTION. */
  otherScopes: number;
  /** In SAMPLE_ACTION's namespace and tenant, none matching its labels. */
  ownScope: number;
}

interface SilenceMatcher {
  name: string;
  op: 'equal' | 'not_equal' | 'regex' | 'not_regex';
  value: string;
}

interface SilenceBody {
  namespace: string;
  tenant: string;
  matchers: SilenceMatcher[];
  comment: string;
  duration_seconds: number;
}

/** Long enough to outlast any run: the silences must stay active through the measurement. */
const DURATION_S = 24 * 3600;
/** Other tenants of SAMPLE_ACTION's namespace that hold silences. */
const OTHER_TENANTS = 100;
/** Other namespaces with silences in a tenant named like SAMPLE_ACTION's. */
const OTHER_NAMESPACES = 10;

/** A label SAMPLE_ACTION does not carry (it reads as the empty string). */
const ABSENT = 'service';

function ownScopeMatchers(i: number): SilenceMatcher[] {
  return i % 2 === 0
    ? [
        { name: 'env', op: 'equal', value: SAMPLE_ACTION.metadata.labels.env },
        { name: ABSENT, op: 'regex', value: `db-${i}-.*` },
      ]
    : [
        { name: 'env', op: 'regex', value: `${SAMPLE_ACTION.metadata.labels.env}|staging-${i}` },
        { name: 'team', op: 'equal', value: `team-${i}` },
      ];
}

/** Matchers that all hold on SAMPLE_ACTION's labels. */
function matchingMatchers(i: number): SilenceMatcher[] {
  return i % 2 === 0
    ? [
        { name: 'env', op: 'equal', value: SAMPLE_ACTION.metadata.labels.env },
        { name: ABSENT, op: 'not_regex', value: `db-${i}-.*` },
      ]
    : [
        { name: 'env', op: 'regex', value: `${SAMPLE_ACTION.metadata.labels.env}|staging-${i}` },
        { name: 'team', op: 'not_equal', value: `team-${i}` },
      ];
}

function otherTenant(i: number): string {
  const k = i % OTHER_TENANTS;
  if (k === 0) return `${SAMPLE_ACTION.tenant}.eu`;
  if (k === 1) return `${SAMPLE_ACTION.tenant}-eu`;
  return `tenant-${String(k).padStart(3, '0')}`;
}

/** The silences of a spec, in creation order: the other scopes' first, then the action's own. */
function silenceBodies(spec: SilenceSpec): SilenceBody[] {
  const inOtherNamespaces = Math.floor(spec.otherScopes / 10);
  const bodies: SilenceBody[] = [];
  for (let i = 0; i < spec.otherScopes; i++) {
    const elsewhere = i < inOtherNamespaces;
    bodies.push({
      namespace: elsewhere ? `ns-${i % OTHER_NAMESPACES}` : SAMPLE_ACTION.namespace,
      tenant: elsewhere ? SAMPLE_ACTION.tenant : otherTenant(i),
      matchers: matchingMatchers(i),
      comment: `bench: other scope ${i}`,
      duration_seconds: DURATION_S,
    });
  }
  for (let i = 0; i < spec.ownScope; i++) {
    bodies.push({
      namespace: SAMPLE_ACTION.namespace,
      tenant: SAMPLE_ACTION.tenant,
      matchers: ownScopeMatchers(i),
      comment: `bench: own scope ${i}`,
      duration_seconds: DURATION_S,
    });
  }
  return bodies;
}

/** Labels on which the first own-scope silence holds (the sanity check's dry run expects it to mute them). */
export function ownScopeMutedLabels(): Record<string, string> {
  return { env: SAMPLE_ACTION.metadata.labels.env, [ABSENT]: 'db-0-main' };
}

export function silenceCount(spec: SilenceSpec | null): number {
  return spec ? spec.otherScopes + spec.ownScope : 0;
}

/**
 * Creates the silences one at a time; returns how long it took. Every create reloads and
 * recompiles the replica's whole snapshot before answering, so the total grows with the square of
 * the count (33–38 s for 1 020 on the 2-vCPU bench machine); concurrent creates would only queue
 * behind the same reloads.
 */
export async function createSilences(url: string, spec: SilenceSpec): Promise<{ created: number; setupMs: number }> {
  const started = performance.now();
  const bodies = silenceBodies(spec);
  for (const body of bodies) {
    const res = await fetch(`${url}/v1/silences`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST /v1/silences answered ${res.status}: ${text.slice(0, 300)}`);
  }
  return { created: bodies.length, setupMs: performance.now() - started };
}
