export * from './types.js';
export { RuleDefinitionError } from './errors.js';
export { compileRuleDefinition } from './definition/compile-rule.js';
export { RULE_ACTION_TYPES } from './definition/action-schema.js';
export { loadRuleDirectory } from './loading/load-rule-directory.js';
export { RuleSet } from './evaluation/rule-set.js';
export { formatRuleSource } from './source-label.js';
export { applyMergePatch } from './merge-patch.js';
export { playgroundContext } from './playground-context.js';
