/**
 * The error registry: every error the API can return has one UPPER_SNAKE code, an HTTP status
 * and a message template. docs/errors.md lists the same codes (a test keeps the two in step).
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
  // identity and permission
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  // resources
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNPROCESSABLE: 422,
  // load and availability
  RATE_LIMITED: 429,
  NOT_READY: 503,
  FEATURE_DISABLED: 503,
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
  payloadTooLarge: (limit: number) => new SluiceError('PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${limit} bytes`),
  unsupportedMediaType: (type: string) =>
    new SluiceError('UNSUPPORTED_MEDIA_TYPE', `unsupported content type: ${type || '(none)'}; expected application/json`),
  unauthorized: (message = 'missing authentication credentials') => new SluiceError('UNAUTHORIZED', message),
  forbidden: (message: string) => new SluiceError('FORBIDDEN', message),
  notFound: (thing: string, id: string) => new SluiceError('NOT_FOUND', `${thing} not found: ${id}`),
  routeNotFound: (method: string, url: string) => new SluiceError('NOT_FOUND', `route not found: ${method} ${url}`),
  conflict: (message: string) => new SluiceError('CONFLICT', message),
  unprocessable: (message: string) => new SluiceError('UNPROCESSABLE', message),
  rateLimited: (retryAfterSeconds: number) =>
    new SluiceError('RATE_LIMITED', 'rate limit exceeded', { extra: { retry_after: retryAfterSeconds } }),
  notReady: (reason: string) => new SluiceError('NOT_READY', `not ready: ${reason}`),
  featureDisabled: (message: string) => new SluiceError('FEATURE_DISABLED', message),
  internal: (cause?: unknown) => new SluiceError('INTERNAL', 'internal server error', { cause }),
} as const;
