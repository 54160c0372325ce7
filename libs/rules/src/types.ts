/**
 * Public contract of the rule engine (libs/rules). The gateway and the API depend only on what
 * is declared here; everything else in this package is internal.
 */

/** The action as rules see it: paths `action.<field>`. */
export interface RuleActionView {
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  id?: string;
  dedup_key?: string;
  status?: string;
  fingerprint?: string;
}

/** Everything a condition can read. */
export interface EvalInput {
  action: RuleActionView;
  /** `state.current` and other state keys (event lifecycle; the playground's mock_state). */
  state: Record<string, unknown>;
  /** Evaluation time, epoch ms (the playground's evaluate_at). */
  now: number;
  /** The similarity of a text to a topic, when already computed (semantic_match throws SimilarityNeeded otherwise). */
  similarity?: (topic: string, text: string) => number | undefined;
  /** A plugin function's verdict on this action, when already computed (wasm_plugin throws PluginCallNeeded otherwise). */
  plugin?: (plugin: string, fn: string) => boolean | undefined;
}

/** Rule actions (`action.type`), after validation; field names per api-decisions "Rules". */
export type RuleAction =
  | { type: 'allow'; metadata?: Record<string, unknown> }
  | { type: 'suppress'; reason?: string }
  | { type: 'deduplicate'; ttl_seconds: number }
  | { type: 'throttle'; max_count: number; window_seconds: number; message?: string }
  | { type: 'reroute'; target_provider: string }
  | { type: 'modify'; changes: Record<string, unknown> }
  | {
      type: 'group';
      group_by: string[];
      group_wait_seconds: number;
      group_interval_seconds: number;
      repeat_interval_seconds?: number;
      max_group_size: number;
    }
  | { type: 'state_machine'; state_machine: string; fingerprint_fields?: string[] }
  | { type: 'require_approval'; message?: string; ttl_seconds: number; notify_provider?: string }
  | { type: 'chain'; chain_name: string }
  | { type: 'llm_guardrail'; evaluator_name: string; block_on_flag: boolean; send_to?: string };

export type RuleActionType = RuleAction['type'];

/** Where a rule came from. */
export type RuleSource = { kind: 'yaml'; file: string } | { kind: 'cel'; file: string } | { kind: 'api' };

/** A rule compiled once at load: the condition is a closure, regexes and CEL programs are built. */
export interface CompiledRule {
  readonly name: string;
  readonly priority: number;
  readonly description: string | null;
  /** As defined; the live enabled flag may be overridden at runtime (see RuleSet). */
  readonly enabled: boolean;
  readonly source: RuleSource;
  /** Human-readable condition (playground trace). */
  readonly conditionDisplay: string;
  /** The action kind for listings (for expression rules: the action they can yield, e.g. "allow|suppress"). */
  readonly actionLabel: string;
  readonly muteTimeIntervals: readonly string[];
  readonly activeTimeIntervals: readonly string[];
  /** The validated definition, as it would be written in YAML/JSON (what GET and the API store). */
  readonly definition: Readonly<Record<string, unknown>>;
  /**
   * Evaluates the condition. Returns the action the rule decides when it matches, or null.
   * Throws RuleEvaluationError when the condition cannot be evaluated (CEL error, ...).
   */
  evaluate(input: EvalInput): RuleAction | null;
}

/** A load-time problem: which file, which rule (when known), and why. */
export interface RuleLoadError {
  file: string;
  rule?: string;
  message: string;
}

/** Which optional runtimes are configured; rules needing a missing one fail to load, saying so. */
export interface CompileEnv {
  wasmRuntime: boolean;
  embeddingProvider: boolean;
}

export interface Decision {
  rule: CompiledRule;
  action: RuleAction;
}

type TraceResult = 'matched' | 'not_matched' | 'skipped' | 'error';

/** One playground trace line (spec "Playground evaluation result"). */
export interface TraceEntry {
  rule_name: string;
  priority: number;
  enabled: boolean;
  condition_display: string;
  result: TraceResult;
  evaluation_duration_us: number;
  action: string;
  source: string;
  description: string | null;
  skip_reason: string | null;
  error: string | null;
}

export interface TraceOptions {
  includeDisabled: boolean;
  evaluateAll: boolean;
  isEnabled: (rule: CompiledRule) => boolean;
}

export interface TraceOutcome {
  /** First match (the decision dispatch would take), or null. */
  decision: Decision | null;
  /** True when some rule errored before any match (playground verdict `error`). */
  erroredBeforeMatch: boolean;
  hasErrors: boolean;
  evaluated: number;
  skipped: number;
  trace: TraceEntry[];
}
