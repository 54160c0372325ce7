/**
 * Before a scenario's warm-up: one request must get the scenario's outcome, and the gateway must
 * report the scenario's rules and active silences (and, with silences, mute a dry run whose
 * labels one of them matches), so a misconfigured run fails loudly instead of measuring the
 * wrong path.
 */
import { bodyGenerator, SAMPLE_ACTION, type BodySpec } from './action-body.js';
import { ruleCount } from './rules-fixture.js';
import { ownScopeMutedLabels, silenceCount } from './silences-fixture.js';
import type { Scenario } from './scenarios.js';

/** A body of the scenario's shape whose unique keys cannot collide with the load's. */
export function sideBodies(spec: BodySpec, tag: string): () => string {
  return bodyGenerator(spec.kind === 'unique-dedup' ? { ...spec, runId: `${spec.runId}-${tag}` } : spec);
}

function outcomeOf(body: unknown, batch: boolean): unknown {
  if (typeof body !== 'object' || body === null) return undefined;
  if (!batch) return (body as { outcome?: unknown }).outcome;
  const first = (body as { results?: { outcome?: { outcome?: unknown } }[] }).results?.[0];
  return first?.outcome?.outcome;
}

export async function sanityCheck(scenario: Scenario, url: string): Promise<void> {
  const res = await fetch(`${url}${scenario.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: sideBodies(scenario.body, 'check')(),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`scenario ${scenario.id}: check request answered ${res.status}: ${text}`);
  const outcome = outcomeOf(JSON.parse(text) as unknown, scenario.path.endsWith('/batch'));
  const expected = scenario.expectOutcome === 'baseline' ? 'executed' : scenario.expectOutcome;
  if (outcome !== expected) throw new Error(`scenario ${scenario.id}: expected outcome ${expected}, got ${String(outcome)}: ${text.slice(0, 300)}`);
  if (scenario.server !== 'sluice') return;
  const rules = (await (await fetch(`${url}/v1/rules`)).json()) as { rules?: unknown[] };
  const want = ruleCount(scenario.rules);
  if (rules.rules?.length !== want)
    throw new Error(`scenario ${scenario.id}: expected ${want} rules loaded, the gateway reports ${rules.rules?.length ?? 'none'}`);
  const silences = (await (await fetch(`${url}/v1/silences`)).json()) as { count?: unknown };
  const active = silenceCount(scenario.silences);
  if (silences.count !== active) throw new Error(`scenario ${scenario.id}: expected ${active} active silences, the gateway reports ${String(silences.count)}`);
  // The silences are consulted: the same action with labels an in-scope silence matches is muted.
  if (!scenario.silences || scenario.silences.ownScope === 0) return;
  const muted = { ...SAMPLE_ACTION, metadata: { ...SAMPLE_ACTION.metadata, labels: ownScopeMutedLabels() } };
  const dry = await fetch(`${url}/v1/dispatch?dry_run=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(muted) });
  const dryText = await dry.text();
  const silenceId = dry.status === 200 ? (JSON.parse(dryText) as { silence_id?: unknown }).silence_id : undefined;
  if (typeof silenceId !== 'string')
    throw new Error(`scenario ${scenario.id}: a dry run with matching labels was not muted (${dry.status}): ${dryText.slice(0, 300)}`);
}
