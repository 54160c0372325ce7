export * from './types.js';
export { RuleDefinitionError } from './errors.js';
/** @public entry points of the engine used outside the gateway (index.test.ts pins them) */
export { EvaluationLimitExceeded, PluginCallNeeded, RuleEvaluationError, SimilarityNeeded } from './errors.js';
/** @public */
export { parseRuleFile } from './loading/parse-rule-file.js';
/** @public */
export { FALLTHROUGH_ENTRY } from './evaluation/trace-rules.js';
export { compileRuleDefinition } from './definition/compile-rule.js';
export { RULE_ACTION_TYPES } from './definition/action-schema.js';
export { loadRuleDirectory } from './loading/load-rule-directory.js';
export { RuleSet } from './evaluation/rule-set.js';
export { formatRuleSource } from './source-label.js';
export { applyMergePatch } from './merge-patch.js';
export { playgroundContext } from './playground-context.js';
export { compileRe2 } from './conditions/operators.js';
export { configureEvaluationLimits, evaluationLimits } from './evaluation-limits.js';
