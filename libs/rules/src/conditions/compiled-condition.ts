import type { CompileEnv, EvalInput } from '../types.js';
import type { IssueList } from '../definition/issues.js';

export type ConditionTest = (input: EvalInput) => boolean;

/** A condition after validation: its test, its trace display and its canonical (alias-free) definition. */
export interface CompiledCondition {
  readonly test: ConditionTest;
  readonly display: string;
  readonly definition: Record<string, unknown>;
}

export interface ConditionContext {
  readonly env: CompileEnv;
  readonly issues: IssueList;
  /** Instructions of the rule's `matches` patterns so far, capped per rule (evaluation-limits.ts). */
  readonly regexProgramSize: { total: number };
}
