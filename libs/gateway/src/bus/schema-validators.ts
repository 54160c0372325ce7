import type { SchemaValidateFunction } from 'ajv';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import { compileRe2 } from '@sluice/rules';
import { stringify } from 'safe-stable-stringify';

/** The spec's bound on issues in one publish answer. */
const MAX_ISSUES = 10;

export interface ValidationIssue {
  /** JSON Pointer into the payload; "" for the root. */
  path: string;
  message: string;
}

/**
 * JSON Schema (draft 2020-12) for the bus: schemas are compiled when registered (a document
 * that does not compile is refused) and, for publishing, compiled lazily per version and kept in
 * a bounded LRU cache. The state store holds the documents, so a restart only recompiles.
 */
export class SchemaValidators {
  private readonly cache: LRUCache<string, ValidateFunction>;

  constructor(maxCached: number) {
    this.cache = new LRUCache({ max: maxCached });
  }

  /** The compiler's message when `body` is not a usable schema; null when it compiles. */
  compileError(body: unknown): string | null {
    try {
      compile(body);
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  /** At most ten issues of `payload` against the schema version `cacheKey` names (compiled from `body` on a miss). */
  issues(cacheKey: string, body: unknown, payload: unknown): ValidationIssue[] {
    let validate = this.cache.get(cacheKey);
    if (!validate) {
      try {
        validate = compile(body);
      } catch (err) {
        // Registered before a bound it breaks was set (an oversized pattern): refused, not a 500.
        return [{ path: '', message: `the schema does not compile: ${err instanceof Error ? err.message : String(err)}` }];
      }
      this.cache.set(cacheKey, validate);
    }
    // A boolean always (asynchronous schemas are refused at compile time); anything else is a failure, not a pass.
    scanned = 0;
    let valid: unknown;
    try {
      valid = validate(payload);
    } catch (err) {
      if (err instanceof ScanBudgetExceeded) return [{ path: '', message: err.message }];
      throw err;
    }
    if (valid === true) return [];
    return (validate.errors ?? []).slice(0, MAX_ISSUES).map((e) => ({ path: e.instancePath, message: e.message ?? 'is invalid' }));
  }
}

/**
 * Schemas come from tenants: their `pattern`s run on RE2 (linear time), never on the backtracking
 * RegExp engine, bounded in compiled size as rule regexes are (a pattern over it is refused when
 * the schema is registered). RE2's time is program size × input length, so the pattern checks of
 * one validation share a budget of instruction-characters; past it the payload is refused.
 */
const re2Engine = Object.assign(
  (pattern: string, flags: string) => {
    const compiled = compileRe2(pattern);
    if (!compiled.ok) throw new Error(`pattern ${JSON.stringify(pattern.slice(0, 64))}: ${compiled.message}`);
    const { regex } = compiled;
    const size = regex.programSize();
    const test = (s: string) => {
      scanned += size * s.length;
      if (scanned > SCAN_BUDGET) throw new ScanBudgetExceeded();
      return regex.test(s);
    };
    // Ajv keys its compiled patterns by toString(), as it would a RegExp's `/source/flags`.
    return { test, toString: () => `/${pattern}/${flags}` };
  },
  { code: 'RE2JS' },
);

/** Instruction-characters the pattern checks of one validation may scan: about 100 ms of RE2 at its slowest. */
const SCAN_BUDGET = 3_000_000;
/** What the current validation has scanned (validation is synchronous: one at a time). */
let scanned = 0;

class ScanBudgetExceeded extends Error {
  constructor() {
    super(`the schema's patterns would scan more than ${SCAN_BUDGET} instruction-characters of this payload`);
  }
}

/**
 * `uniqueItems` in linear time: each item's canonical JSON (keys sorted, so deep equality as JSON
 * Schema defines it) in a set. Ajv compares every pair of non-scalar items (quadratic: 20,000
 * objects held the event loop for 6 s), and a payload may hold ~100,000 of them.
 */
const uniqueItems: SchemaValidateFunction = (schema: boolean, data: unknown[]) => {
  delete uniqueItems.errors;
  if (!schema) return true;
  const seen = new Map<string | undefined, number>();
  for (let i = 0; i < data.length; i++) {
    const key = stringify(data[i]);
    const first = seen.get(key);
    if (first !== undefined) {
      uniqueItems.errors = [
        {
          // No instancePath: Ajv fills in where the array is (`/tags`), as for its own keyword.
          keyword: 'uniqueItems',
          params: { i: first, j: i },
          message: `must NOT have duplicate items (items ## ${first} and ${i} are identical)`,
        },
      ];
      return false;
    }
    seen.set(key, i);
  }
  return true;
};

/**
 * A compiler per schema: Ajv keeps every schema it compiled (and refuses a second one with the
 * same `$id`), so a shared instance would grow with every version ever seen and clash on ids.
 */
function compile(body: unknown): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false, code: { regExp: re2Engine } });
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate: uniqueItems });
  const validate = ajv.compile(body as object);
  // An asynchronous schema validates to a promise: publishing checks synchronously, and its rejection would be unhandled.
  if ((validate as { $async?: unknown }).$async === true) throw new Error('"$async" schemas are not supported: a bus schema validates synchronously');
  return validate;
}
