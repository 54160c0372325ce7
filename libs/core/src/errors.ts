/**
 * The error registry: every error the API can return has one UPPER_SNAKE code, an HTTP status
 * and a message template; every code a `failed` dispatch outcome can carry is registered here
 * too. docs/errors.md lists the same codes (a test keeps the two in step, both ways).
 * Domain code throws these; only apps/api turns them into HTTP responses.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class SluiceError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: ErrorDetail[] | undefined;
  /** Extra fields rendered into the JSON body (e.g. retry_after). */
  readonly extra: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, opts: { details?: ErrorDetail[]; extra?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SluiceError';
    this.code = code;
    this.statusCode = ERROR_STATUS[code];
    this.details = opts.details;
    this.extra = opts.extra;
  }
}

/** Code → HTTP status. Grouped by where they arise. */
export const ERROR_STATUS = {
  // request shape
  BAD_REQUEST: 400,
  INVALID_JSON: 400,
  VALIDATION_FAILED: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  REQUEST_TIMEOUT: 408,
  HEADERS_TOO_LARGE: 431,
  // identity and permission
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  // resources
  NOT_FOUND: 404,
  CONFLICT: 409,
  GONE: 410,
  UNPROCESSABLE: 422,
  // load and availability
  RATE_LIMITED: 429,
  NOT_READY: 503,
  FEATURE_DISABLED: 503,
  STATE_UNAVAILABLE: 503,
  // everything else
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export const errors = {
  badRequest: (message: string) => new SluiceError('BAD_REQUEST', message),
  invalidJson: (reason: string) => new SluiceError('INVALID_JSON', `malformed JSON body: ${reason}`),
  validation: (details: ErrorDetail[]) =>
    new SluiceError('VALIDATION_FAILED', `request validation failed: ${details.map((d) => `${d.path || '(root)'} ${d.message}`).join('; ')}`, {
      details,
    }),
  /** Without a limit when the parser that refused the body does not say which one applied. */
  payloadTooLarge: (limit?: number) =>
    new SluiceError('PAYLOAD_TOO_LARGE', limit === undefined ? 'request body is too large' : `request body exceeds the limit of ${limit} bytes`),
  unsupportedMediaType: (type: string) => new SluiceError('UNSUPPORTED_MEDIA_TYPE', `unsupported content type: ${type || '(none)'}; expected application/json`),
  unsupportedCharset: (charset: string) => new SluiceError('UNSUPPORTED_MEDIA_TYPE', `unsupported charset: ${charset || '(empty)'}; expected utf-8`),
  /** The connection's request did not arrive in full within server.request_timeout_seconds. */
  requestTimeout: () => new SluiceError('REQUEST_TIMEOUT', 'request not received in time'),
  headersTooLarge: () => new SluiceError('HEADERS_TOO_LARGE', 'request headers are too large'),
  /** The state backend (Redis) is unreachable; nothing was executed. Retry after 2 s: ioredis reconnects about that often. */
  stateUnavailable: (cause?: unknown) =>
    new SluiceError('STATE_UNAVAILABLE', 'the state backend is unavailable; retry later', { extra: { retry_after: 2 }, cause }),
  unauthorized: (message = 'missing authentication credentials') => new SluiceError('UNAUTHORIZED', message),
  forbidden: (message: string) => new SluiceError('FORBIDDEN', message),
  notFound: (thing: string, id: string) => new SluiceError('NOT_FOUND', `${thing} not found: ${id}`),
  /** For a lookup whose wording does not fit `<thing> not found: <id>` (an upstream 404's own message). */
  notFoundMessage: (message: string) => new SluiceError('NOT_FOUND', message),
  /** A route whose feature is off answers 404, as if it did not exist; `dependsOn` names the feature whose being off turned it off. */
  featureNotEnabled: (feature: string, dependsOn?: string) =>
    new SluiceError('NOT_FOUND', dependsOn ? `${feature} is not available (${dependsOn} is disabled)` : `${feature} is not enabled`),
  routeNotFound: (method: string, url: string) => new SluiceError('NOT_FOUND', `route not found: ${method} ${url}`),
  conflict: (message: string) => new SluiceError('CONFLICT', message),
  /** Something that existed and can no longer be acted on (an approval already decided). */
  gone: (message: string) => new SluiceError('GONE', message),
  unprocessable: (message: string) => new SluiceError('UNPROCESSABLE', message),
  rateLimited: (retryAfterSeconds: number) => new SluiceError('RATE_LIMITED', 'rate limit exceeded', { extra: { retry_after: retryAfterSeconds } }),
  notReady: (reason: string) => new SluiceError('NOT_READY', `not ready: ${reason}`),
  featureDisabled: (message: string) => new SluiceError('FEATURE_DISABLED', message),
  internal: (cause?: unknown) => new SluiceError('INTERNAL', 'internal server error', { cause }),
} as const;

/** Whether a failure is worth retrying, when that follows from the code alone. */
export type FailureRetryable = 'yes' | 'no' | 'depends';

/**
 * Dispatch failure codes: the `error.code` of a `failed` outcome. A failed dispatch is HTTP 200,
 * not an HTTP error, so these are a registry of their own; the outcome's `retryable` field is
 * authoritative where this says `depends`.
 */
export const FAILURE_CODES = {
  // the pipeline, before any provider is called (attempts 0)
  PROVIDER_NOT_FOUND: { retryable: 'no', meaning: 'the action names a provider that is not configured' },
  RULE_ACTION_UNAVAILABLE: { retryable: 'no', meaning: 'a matching rule asks for an action type whose feature has not shipped' },
  RULE_LIMIT_EXCEEDED: {
    retryable: 'no',
    meaning:
      "a rule's evaluation stopped at a limit (a regex input over rules.regex_max_input_length, a CEL expression over cel_max_cost or cel_max_duration_ms), or the request spent rules.request_max_evaluation_ms; nothing was executed",
  },
  // chains (a `chain` rule)
  CHAIN_NOT_FOUND: { retryable: 'no', meaning: 'the rule names a chain definition that does not exist (any more)' },
  // guardrails (a `semantic_match` condition, an `llm_guardrail` rule)
  EMBEDDING_FAILED: {
    retryable: 'yes',
    meaning: 'a semantic_match condition needed an embedding the embedding service did not give, and embedding.fail_open is false',
  },
  GUARDRAIL_EVALUATOR_NOT_FOUND: { retryable: 'no', meaning: 'an llm_guardrail rule names an evaluator that is not configured (or the guardrail is off)' },
  GUARDRAIL_FAILED: {
    retryable: 'yes',
    meaning: 'the LLM guardrail could not evaluate the action (timeout, error, malformed answer) and llm_guardrail.fail_open is false',
  },
  // state machines (a `state_machine` rule)
  STATE_MACHINE_NOT_FOUND: { retryable: 'no', meaning: 'the rule names a state machine that is not configured' },
  FINGERPRINT_REQUIRED: { retryable: 'no', meaning: 'the action has no fingerprint and the rule no `fingerprint_fields`' },
  STATE_CONFLICT: { retryable: 'yes', meaning: 'the event kept changing under concurrent writers; the transition was not applied' },
  // the provider's circuit breaker (attempts 0)
  CIRCUIT_OPEN: {
    retryable: 'yes',
    meaning: "the provider's circuit breaker is open and it has no fallback (or every fallback's is open too); no call was made",
  },
  // the provider call
  EXECUTION_FAILED: {
    retryable: 'depends',
    meaning: 'the provider failed: a 5xx answer (retryable), another 4xx or a provider error (not), or the call was abandoned (retryable)',
  },
  TIMEOUT: { retryable: 'yes', meaning: 'an attempt timed out, or the upstream answered 408' },
  CONNECTION: { retryable: 'yes', meaning: 'the connection to the upstream failed (refused, reset, DNS, unreachable)' },
  RATE_LIMITED: { retryable: 'yes', meaning: 'the upstream answered 429' },
  CONFIGURATION: { retryable: 'no', meaning: 'the provider is misconfigured (bad URL, invalid request)' },
  SERIALIZATION: { retryable: 'no', meaning: 'the action could not be serialised for the provider' },
} as const satisfies Record<string, { retryable: FailureRetryable; meaning: string }>;

export type FailureCode = keyof typeof FAILURE_CODES;

// Object.keys loses the key type; the registry above is the only source of the list.
export const FAILURE_CODE_LIST = Object.keys(FAILURE_CODES) as [FailureCode, ...FailureCode[]];
