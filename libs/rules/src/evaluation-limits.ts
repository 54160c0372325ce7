import { RuleEvaluationError } from './errors.js';

/**
 * Bounds on what one rule evaluation may cost, so that no rule and no payload can hold the event
 * loop (docs/rules.md, "Evaluation limits"). Process-wide: set once at start-up from the `rules`
 * config section, read on every evaluation.
 */
export interface EvaluationLimits {
  /** Longest string a regular expression scans; a longer value is an evaluation error. */
  readonly regexMaxInputLength: number;
  /** Cost units one CEL expression may spend per evaluation (see chargeCel). */
  readonly celMaxCost: number;
}

export const DEFAULT_EVALUATION_LIMITS: EvaluationLimits = Object.freeze({ regexMaxInputLength: 65_536, celMaxCost: 100_000 });

/** Compiled size caps, fixed: they decide which rules exist, so they must not vary by replica. */
export const MAX_REGEX_PROGRAM_SIZE = 1000;
export const MAX_RULE_REGEX_PROGRAM_SIZE = 2000;

/**
 * RE2 runs in time proportional to program size × input length once its DFA cache is exhausted.
 * Scans are charged so that 4,096 instruction-characters cost one unit, about the price of one
 * comprehension iteration.
 */
const INSTRUCTION_CHARACTERS_PER_UNIT = 4096;

let limits: EvaluationLimits = DEFAULT_EVALUATION_LIMITS;

export function configureEvaluationLimits(next: Partial<EvaluationLimits>): void {
  limits = Object.freeze({ ...DEFAULT_EVALUATION_LIMITS, ...next });
}

export function evaluationLimits(): EvaluationLimits {
  return limits;
}

/** Throws when a regex would scan more than the configured input length. */
export function assertRegexInput(value: string): void {
  if (value.length > limits.regexMaxInputLength) {
    throw new RuleEvaluationError(
      `a regular expression may scan at most ${limits.regexMaxInputLength} characters (rules.regex_max_input_length); the value has ${value.length}`,
    );
  }
}

/**
 * The CEL cost meter: evaluations are synchronous, so one running total serves them all.
 * `spent` keeps counting after the budget is exceeded, so a caller can tell even when an error
 * was absorbed inside the expression (`x || true`).
 */
let spent = 0;
let budget = Number.POSITIVE_INFINITY;

export function chargeCel(units: number): void {
  spent += units;
  if (spent > budget) throw new CelBudgetExceeded(budget);
}

export function chargeRegexScan(programSize: number, length: number): void {
  chargeCel(Math.ceil((programSize * length) / INSTRUCTION_CHARACTERS_PER_UNIT));
}

/** Runs one CEL evaluation under the configured budget; throws RuleEvaluationError when exceeded. */
export function withCelBudget<T>(run: () => T): T {
  spent = 0;
  budget = limits.celMaxCost;
  try {
    const result = run();
    if (spent > budget) throw new CelBudgetExceeded(budget);
    return result;
  } catch (err) {
    if (spent > budget) throw new CelBudgetExceeded(budget);
    throw err;
  } finally {
    budget = Number.POSITIVE_INFINITY;
  }
}

class CelBudgetExceeded extends RuleEvaluationError {
  constructor(limit: number) {
    super(`the expression exceeded its evaluation budget of ${limit} units (rules.cel_max_cost)`);
    this.name = 'CelBudgetExceeded';
  }
}
