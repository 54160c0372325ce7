import { ProviderError } from './provider.js';
import type { HeaderMap } from './response-body.js';

// Error codes (undici's and the OS socket layer's) that mean "try again later", by kind.
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Every `code` on the error, its cause, and (for happy-eyeballs connects) its aggregated errors. */
function errorCodes(err: unknown, depth = 0): string[] {
  if (typeof err !== 'object' || err === null || depth > 3) return [];
  const codes: string[] = [];
  const { code, cause } = err as { code?: unknown; cause?: unknown };
  if (typeof code === 'string') codes.push(code);
  codes.push(...errorCodes(cause, depth + 1));
  if (err instanceof AggregateError) for (const e of err.errors) codes.push(...errorCodes(e, depth + 1));
  return codes;
}

/** Maps whatever undici threw (or a body read failed with) to a ProviderError. */
export function classifyRequestError(
  err: unknown,
  name: string,
  signals: { ctx: AbortSignal; own: AbortSignal | undefined; timeoutMs: number | undefined },
): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signals.own?.aborted) {
    return new ProviderError('TIMEOUT', `webhook "${name}" did not answer within ${signals.timeoutMs} ms`, { retryable: true, cause: err });
  }
  if (signals.ctx.aborted) {
    // The executor aborts with its own TIMEOUT ProviderError; keep it so the message says why.
    const reason: unknown = signals.ctx.reason;
    if (reason instanceof ProviderError) return reason;
    return new ProviderError('TIMEOUT', `webhook "${name}" call aborted`, { retryable: true, cause: err });
  }
  // The messages name the codes only: the client's own text names the provider's address, which
  // tenants (who read outcomes, audit records and the stream) are not told; the webhook logs it.
  const codes = errorCodes(err);
  const named = codes.length === 0 ? '' : ` (${codes.join(', ')})`;
  if (codes.some((c) => TIMEOUT_CODES.has(c))) {
    return new ProviderError('TIMEOUT', `webhook "${name}" timed out${named}`, { retryable: true, cause: err });
  }
  if (codes.some((c) => CONNECTION_CODES.has(c))) {
    return new ProviderError('CONNECTION', `webhook "${name}" connection failed${named}`, { retryable: true, cause: err });
  }
  if (codes.includes('UND_ERR_INVALID_ARG')) {
    return new ProviderError('CONFIGURATION', `webhook "${name}" request is invalid${named}`, { retryable: false, cause: err });
  }
  return new ProviderError('EXECUTION_FAILED', `webhook "${name}" failed${named}`, { retryable: false, cause: err });
}

/** Retry-After as delta-seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A non-2xx answer: 408, 429 and 5xx are worth retrying; anything else is the request's fault. */
export function statusError(name: string, status: number, headers: HeaderMap): ProviderError {
  const message = `webhook "${name}" answered HTTP ${status}`;
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(headers['retry-after']) : undefined;
  const extra = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status === 429) return new ProviderError('RATE_LIMITED', message, { retryable: true, httpStatus: status, ...extra });
  if (status === 408) return new ProviderError('TIMEOUT', message, { retryable: true, httpStatus: status });
  if (status >= 500) return new ProviderError('EXECUTION_FAILED', message, { retryable: true, httpStatus: status, ...extra });
  return new ProviderError('EXECUTION_FAILED', message, { retryable: false, httpStatus: status });
}
