import { EvaluationLimitExceeded } from './errors.js';

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
  /**
   * Wall time one CEL evaluation may take: a unit is one comprehension step, whatever the step
   * does (`x in list` scans a list), so the clock bounds what the units cannot.
   */
  readonly celMaxDurationMs: number;
}

export const DEFAULT_EVALUATION_LIMITS: EvaluationLimits = Object.freeze({ regexMaxInputLength: 65_536, celMaxCost: 100_000, celMaxDurationMs: 50 });

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
    throw new EvaluationLimitExceeded(
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
let deadline = Number.POSITIVE_INFINITY;
let timedOut = false;
/** The clock is read every 32 charges: a few nanoseconds per step instead of a clock read. */
let charges = 0;

export function chargeCel(units: number): void {
  spent += units;
  if (spent > budget) throw new CelBudgetExceeded(budget);
  // Once out of time, every charge throws: an error absorbed inside `exists` must not let the loop go on.
  if (timedOut || (++charges & 31) === 0) checkCelClock();
}

/** Reads the clock now: after work a unit does not price well (compiling a regex). */
export function checkCelClock(): void {
  if (!timedOut && performance.now() <= deadline) return;
  timedOut = true;
  throw new CelTimeExceeded(limits.celMaxDurationMs);
}

export function chargeRegexScan(programSize: number, length: number): void {
  chargeCel(Math.ceil((programSize * length) / INSTRUCTION_CHARACTERS_PER_UNIT));
}

/** Runs one CEL evaluation under the configured budget; throws EvaluationLimitExceeded when exceeded. */
export function withCelBudget<T>(run: () => T): T {
  spent = 0;
  charges = 0;
  timedOut = false;
  budget = limits.celMaxCost;
  deadline = performance.now() + limits.celMaxDurationMs;
  try {
    const result = run();
    exceeded();
    return result;
  } catch (err) {
    exceeded();
    throw err;
  } finally {
    budget = Number.POSITIVE_INFINITY;
    deadline = Number.POSITIVE_INFINITY;
  }
}

/** A limit hit inside the expression counts even when the expression absorbed the error (`x || true`). */
function exceeded(): void {
  if (spent > budget) throw new CelBudgetExceeded(budget);
  if (timedOut) throw new CelTimeExceeded(limits.celMaxDurationMs);
}

class CelTimeExceeded extends EvaluationLimitExceeded {
  constructor(ms: number) {
    super(`the expression ran longer than ${ms} ms (rules.cel_max_duration_ms)`);
    this.name = 'CelTimeExceeded';
  }
}

class CelBudgetExceeded extends EvaluationLimitExceeded {
  constructor(limit: number) {
    super(`the expression exceeded its evaluation budget of ${limit} units (rules.cel_max_cost)`);
    this.name = 'CelBudgetExceeded';
  }
}
