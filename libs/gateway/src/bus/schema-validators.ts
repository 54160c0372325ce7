import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';

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
      validate = compile(body);
      this.cache.set(cacheKey, validate);
    }
    if (validate(payload)) return [];
    return (validate.errors ?? []).slice(0, MAX_ISSUES).map((e) => ({ path: e.instancePath, message: e.message ?? 'is invalid' }));
  }
}

/**
 * Schemas come from tenants: their `pattern`s run on RE2 (linear time), never on the backtracking
 * RegExp engine, so no schema can stall the process for everyone (as rule regexes, see the rules lib).
 */
const re2Engine = Object.assign(
  (pattern: string, flags: string) => {
    const regex = RE2JS.compile(pattern);
    // Ajv keys its compiled patterns by toString(), as it would a RegExp's `/source/flags`.
    return { test: (s: string) => regex.test(s), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'RE2JS' },
);

/**
 * A compiler per schema: Ajv keeps every schema it compiled (and refuses a second one with the
 * same `$id`), so a shared instance would grow with every version ever seen and clash on ids.
 */
function compile(body: unknown): ValidateFunction {
  return new Ajv2020({ allErrors: true, strict: false, validateFormats: false, code: { regExp: re2Engine } }).compile(body as object);
}
