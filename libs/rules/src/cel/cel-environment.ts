import { Environment } from '@marcbachmann/cel-js';
import type { RuleAction } from '../types.js';
import { compileRe2 } from '../conditions/operators.js';
import type { RE2JS } from 're2js';
import { assertRegexInput, chargeRegexScan, checkCelClock } from '../evaluation-limits.js';
import './cel-iteration-meter.js';

/**
 * What `allow()` / `suppress(reason)` return inside an expression: a marker carrying the rule
 * action it decides. A class (not a plain object) so CEL types it and results are recognised by
 * `instanceof`.
 */
export class CelVerdict {
  constructor(readonly action: RuleAction) {}
}

const ALLOW = new CelVerdict(Object.freeze({ type: 'allow' }));
const SUPPRESS = new CelVerdict(Object.freeze({ type: 'suppress' }));

/** Bounded parse-time size: expressions are small predicates, not programs. */
const CEL_LIMITS = { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 16 };

export const MAX_EXPRESSION_LENGTH = 4096;

/** `re2Matches` replaces CEL's `matches`, which cel-js runs on the backtracking JS RegExp engine. */
export const RE2_FUNCTION = 're2Matches';

/**
 * Patterns used at runtime (a pattern taken from the payload), compiled once, refusals too (so a
 * bad pattern is not compiled on every call); bounded so dynamic patterns cannot grow it forever.
 */
const re2Cache = new Map<string, RE2JS | string>();
const RE2_CACHE_LIMIT = 256;
/** A compile costs about a scan of this many characters per pattern character. */
const COMPILE_COST_PER_CHARACTER = 64;

function re2Search(text: string, pattern: string): boolean {
  let regex = re2Cache.get(pattern);
  if (regex === undefined) {
    checkCelClock();
    chargeRegexScan(COMPILE_COST_PER_CHARACTER, pattern.length);
    const compiled = compileRe2(pattern);
    checkCelClock();
    regex = compiled.ok ? compiled.regex : compiled.message;
    if (re2Cache.size >= RE2_CACHE_LIMIT) re2Cache.clear();
    re2Cache.set(pattern, regex);
  }
  if (typeof regex === 'string') throw new Error(regex);
  assertRegexInput(text);
  chargeRegexScan(regex.programSize(), text.length);
  return regex.test(text);
}

/**
 * The one CEL environment every expression rule is parsed in (building one is expensive).
 * Variables: `action` (the RuleActionView as a map) and `state`.
 */
export const celEnvironment = new Environment({ homogeneousAggregateLiterals: false, limits: CEL_LIMITS })
  .registerVariable('action', 'map')
  .registerVariable('state', 'map')
  .registerType('Verdict', CelVerdict)
  .registerFunction('allow(): Verdict', () => ALLOW)
  .registerFunction('suppress(): Verdict', () => SUPPRESS)
  .registerFunction('suppress(string): Verdict', (reason: string) => new CelVerdict({ type: 'suppress', reason }))
  .registerFunction(`string.${RE2_FUNCTION}(string): bool`, re2Search);

/** The CEL type name the environment reports for verdict-valued expressions. */
export const VERDICT_TYPE = 'Verdict';
