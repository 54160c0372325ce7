import type { RuleActionType } from '@sluice/rules';
import { approvalsFeature, type ApprovalsFeature } from '../approvals/approvals-feature.js';
import { auditFeature, type AuditFeature } from '../audit/audit-feature.js';
import type { Feature, FeatureContext, JobDefinition } from '../feature.js';
import { groupingFeature, type GroupingFeature } from '../grouping/grouping-feature.js';
import { quotasFeature, type QuotasFeature } from '../quotas/quotas-feature.js';
import { recurringFeature, type RecurringFeature } from '../recurring/recurring-feature.js';
import {
  retentionPoliciesFeature,
  retentionReaperFeature,
  type RetentionPoliciesFeature,
  type RetentionReaperFeature,
} from '../retention/retention-feature.js';
import type { RuleActionHandler } from '../rule-actions/rule-action-handler.js';
import { rulesFeature, type RulesFeature, type RulesInputs } from '../rules/rules-feature.js';
import { silencesFeature, type SilencesFeature } from '../silences/silences-feature.js';
import { chainsFeature, type ChainsFeature } from '../chains/chains-feature.js';
import { deadLettersFeature, type DeadLettersFeature } from '../dead-letters/dead-letters-feature.js';
import { executeFeature } from '../stages/execute-feature.js';
import { resilienceFeature, type ResilienceFeature } from '../resilience/resilience-feature.js';
import { streamFeature, type StreamFeature } from '../stream/stream-feature.js';
import { busFeature, type BusFeature } from '../bus/bus-feature.js';
import { embeddingsFeature, type EmbeddingsFeature } from '../guardrails/embeddings-feature.js';
import { llmGuardrailFeature } from '../guardrails/llm-guardrail-feature.js';
import { pluginsFeature, type PluginsFeature } from '../plugins/plugins-feature.js';
import type { PluginRegistry } from '../plugins/plugin-registry.js';
import { stateMachinesFeature, type StateMachinesFeature } from '../state-machines/state-machines-feature.js';
import { timeIntervalsFeature, type TimeIntervalsFeature } from '../time-intervals/time-intervals-feature.js';

/** Every feature of a process, by name: what the apps reach (routes, the worker's consumers). */
export interface Features {
  quotas: QuotasFeature;
  retention: RetentionPoliciesFeature;
  audit: AuditFeature;
  stateMachines: StateMachinesFeature;
  grouping: GroupingFeature;
  recurring: RecurringFeature;
  approvals: ApprovalsFeature;
  chains: ChainsFeature;
  reaper: RetentionReaperFeature;
  silences: SilencesFeature;
  embeddings: EmbeddingsFeature;
  plugins: PluginsFeature;
  llmGuardrail: Feature;
  timeIntervals: TimeIntervalsFeature;
  rules: RulesFeature;
  deadLetters: DeadLettersFeature;
  resilience: ResilienceFeature;
  stream: StreamFeature;
  bus: BusFeature;
  execute: Feature;
}

/**
 * THE list of features: each line builds one from the shared parts and what earlier ones made.
 * Adding a feature is its own folder plus one line here (and its entry in `Features`, which the
 * API's route table must then cover). `onBuilt` hears of each as soon as it exists, so a
 * failure further down can still close it.
 */
export async function buildFeatures(ctx: FeatureContext, onBuilt: (feature: Feature) => void): Promise<Features> {
  const built = <F extends Feature>(feature: F): F => {
    onBuilt(feature);
    return feature;
  };
  const quotas = built(await quotasFeature(ctx));
  const retention = built(await retentionPoliciesFeature(ctx));
  const audit = built(await auditFeature(ctx, retention.repository));
  const stateMachines = built(stateMachinesFeature(ctx));
  const grouping = built(groupingFeature(ctx));
  const recurring = built(recurringFeature(ctx));
  const approvals = built(await approvalsFeature(ctx, audit.parts.recorder));
  const deadLetters = built(deadLettersFeature(ctx));
  const chains = built(await chainsFeature(ctx, deadLetters.queue));
  const llmGuardrail = built(llmGuardrailFeature(ctx));
  const others = [quotas, retention, audit, stateMachines, grouping, recurring, approvals, chains, llmGuardrail];
  const reaper = built(
    retentionReaperFeature(ctx, {
      policies: retention.repository,
      audit: audit.parts.store ?? undefined,
      immutableAudit: audit.parts.compliance.immutable_audit,
      sources: others.flatMap((f) => f.retentionSources ?? []),
    }),
  );
  const silences = built(await silencesFeature(ctx));
  const timeIntervals = built(await timeIntervalsFeature(ctx));
  const embeddings = built(embeddingsFeature(ctx));
  const plugins = built(await pluginsFeature(ctx));
  const rules = built(
    await rulesFeature(ctx, {
      ruleActions: ruleActionsOf(others),
      currentState: (dispatch) => stateMachines.service.currentState(dispatch.action),
      intervals: timeIntervals.service,
      ...(embeddings.similarity ? { similarity: embeddings.similarity } : {}),
      ...(plugins.plugin ? { plugin: plugins.plugin } : {}),
      ...(plugins.registry ? pluginInputs(plugins.registry) : {}),
    }),
  );
  const resilience = built(resilienceFeature(ctx));
  const stream = built(await streamFeature(ctx));
  const bus = built(busFeature(ctx));
  const intents = audit.intents;
  const execute = built(
    executeFeature(ctx, {
      onExhausted: deadLetters.onExhausted,
      breakers: resilience.breakers ?? undefined,
      beforeCall: intents ? (c) => intents.record(c) : undefined,
    }),
  );
  return {
    quotas,
    retention,
    audit,
    stateMachines,
    grouping,
    recurring,
    approvals,
    chains,
    reaper,
    silences,
    embeddings,
    plugins,
    llmGuardrail,
    timeIntervals,
    rules,
    deadLetters,
    resilience,
    stream,
    bus,
    execute,
  };
}

/** The rule actions the features implement; two features claiming one action is a programming error. */
export function ruleActionsOf(features: readonly Feature[]): Partial<Record<RuleActionType, RuleActionHandler>> {
  return mergeOnce(features, (f) => f.ruleActions ?? {}, 'rule action');
}

/** Every job kind of the features, by durable queue name. */
export function jobsOf(features: readonly Feature[]): Readonly<Record<string, JobDefinition>> {
  return mergeOnce(features, (f) => f.jobs ?? {}, 'job kind');
}

function mergeOnce<V>(features: readonly Feature[], part: (f: Feature) => Readonly<Record<string, V>>, what: string): Record<string, V> {
  const merged: Record<string, V> = {};
  const owner = new Map<string, string>();
  for (const feature of features) {
    for (const [key, value] of Object.entries(part(feature))) {
      const other = owner.get(key);
      if (other !== undefined) throw new Error(`${what} ${key} is declared by both ${other} and ${feature.name}`);
      owner.set(key, feature.name);
      merged[key] = value;
    }
  }
  return merged;
}

/** What the rules need of the plugin registry: a reload with the rules, and whether a plugin's function is loaded. */
function pluginInputs(registry: PluginRegistry): Pick<RulesInputs, 'reloadPlugins' | 'plugins'> {
  return { reloadPlugins: () => registry.load().then((r) => r.errors), plugins: (name, fn) => registry.missing(name, fn) };
}
