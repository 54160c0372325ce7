/** One problem in a rule definition: where (dotted path inside the rule, "" for the rule itself) and what. */
export interface RuleDefinitionIssue {
  path: string;
  message: string;
}

/**
 * A rule definition was rejected (API body or one rule-file entry). `details` lists every problem
 * found, so a caller can report them all at once (the API maps them to a 400 VALIDATION_FAILED).
 */
export class RuleDefinitionError extends Error {
  readonly ruleName: string | undefined;
  readonly details: RuleDefinitionIssue[];

  constructor(details: RuleDefinitionIssue[], ruleName?: string) {
    const prefix = ruleName === undefined ? 'invalid rule' : `invalid rule "${ruleName}"`;
    super(`${prefix}: ${formatIssues(details)}`);
    this.name = 'RuleDefinitionError';
    this.ruleName = ruleName;
    this.details = details;
  }
}

/**
 * A `semantic_match` condition needs a similarity the evaluation input does not have yet. It is
 * not an evaluation error: the caller computes the similarity (asynchronously, through the
 * embedding service) and evaluates again; rules are pure and synchronous, so this costs a second
 * pass over the rules before the semantic one, never a wrong first match.
 */
export class SimilarityNeeded extends Error {
  constructor(
    readonly topic: string,
    readonly text: string,
  ) {
    super('semantic_match needs a similarity that is not computed yet');
    this.name = 'SimilarityNeeded';
  }
}

/** A `wasm_plugin` condition needs its plugin's verdict, which the caller gets (on a worker thread) before evaluating again. */
export class PluginCallNeeded extends Error {
  constructor(
    readonly plugin: string,
    readonly fn: string,
  ) {
    super('wasm_plugin needs a verdict that is not computed yet');
    this.name = 'PluginCallNeeded';
  }
}

/** A condition could not be evaluated (CEL runtime error, unexpected result, ...); the rule counts as errored. */
export class RuleEvaluationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RuleEvaluationError';
  }
}

/**
 * An evaluation stopped at one of its limits (rules.regex_max_input_length, cel_max_cost,
 * cel_max_duration_ms). Unlike other evaluation errors, the input decides whether it happens: a
 * dispatch fails on it rather than skipping the rule, or padding a payload would get past a rule.
 */
export class EvaluationLimitExceeded extends RuleEvaluationError {
  constructor(message: string) {
    super(message);
    this.name = 'EvaluationLimitExceeded';
  }
}

/** `path: message; path: message` — the one-line form used in load errors and error messages. */
export function formatIssues(details: readonly RuleDefinitionIssue[]): string {
  return details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
}
