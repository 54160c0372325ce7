/** Statuses a request is retried on: rate limited, or the gateway (or its state) briefly unavailable. */
const RETRYABLE = new Set([429, 503]);

export interface RetryOptions {
  /** Attempts after the first (default 3). */
  retries: number;
  /** The longest wait between attempts, whatever Retry-After says (default 30 s). */
  maxDelayMs: number;
}

/**
 * A fetch that sends a request again on 429 and 503 (not a 503 `FEATURE_DISABLED`), after the `Retry-After` the answer gives
 * (seconds or an HTTP date), else after 0.5 s, 1 s, 2 s… Each attempt sends a clone, so a body
 * is sent whole every time. The last answer is returned as it is, and so is one whose
 * Retry-After is longer than maxDelayMs.
 */
export function retryingFetch(base: (request: Request) => Promise<Response>, opts: RetryOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await base(request.clone());
      if (!RETRYABLE.has(response.status) || attempt >= opts.retries || (await featureOff(response))) return response;
      const delay = retryDelayMs(response.headers.get('retry-after'), attempt);
      // Asked to wait longer than we may: an earlier attempt would be refused again (and counted
      // against the caller's limit), so the answer goes back to the caller, who knows when to try.
      if (delay > opts.maxDelayMs) return response;
      // Drain the refused answer so its connection is reused.
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

/** A 503 that says the feature is off (`FEATURE_DISABLED`): asking again changes nothing. */
async function featureOff(response: Response): Promise<boolean> {
  if (response.status !== 503) return false;
  try {
    return ((await response.clone().json()) as { code?: unknown }).code === 'FEATURE_DISABLED';
  } catch {
    return false;
  }
}

/** Retry-After's seconds (digits only) or HTTP date (a weekday name first, RFC 9110); anything else: backoff. */
function retryDelayMs(header: string | null, attempt: number): number {
  const value = header?.trim() ?? '';
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (/^[A-Za-z]{3},/.test(value)) {
    const at = Date.parse(value);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return 500 * 2 ** attempt;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    // The listener goes when the wait ends: a long-lived signal shared by many requests must not collect them.
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
