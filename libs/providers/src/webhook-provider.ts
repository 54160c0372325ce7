import { createHmac } from 'node:crypto';
import type { Action, ProviderResponse } from '@sluice/core';
import type { Agent, Dispatcher } from 'undici';
import { loadUndici } from './lazy-undici.js';
import { actionView } from './log-provider.js';
import type { LogFn } from './spec.js';
import { ProviderError, type ExecuteContext, type Provider } from './provider.js';
import { flattenHeaders, parseBody, readBounded } from './response-body.js';
import { classifyRequestError, statusError } from './webhook-errors.js';

export interface WebhookOptions {
  url: string;
  headers?: Record<string, string>;
  /** The provider's own per-call limit; the executor's per-attempt timeout applies as well (first wins). */
  timeoutMs?: number | undefined;
  /** Signs each body: X-Sluice-Signature (the body's HMAC-SHA256), X-Sluice-Timestamp and X-Sluice-Signature-Timestamped (over `<timestamp>.<body>`). */
  hmacSecret?: string | undefined;
  maxResponseBytes: number;
  /** A JSON answer nested deeper is handed on as text (`server.max_json_depth`). */
  maxJsonDepth: number;
  /** Where a failed call's full client error (its address included) is written, at debug. */
  log?: LogFn;
}

/** How much of a non-2xx body is read to keep the socket reusable; bigger ones close the socket. */
const ERROR_BODY_DRAIN_BYTES = 64 * 1024;
/** And for how long: a body that trickles must not hold the attempt (and its slot) to its timeout. */
const ERROR_BODY_DRAIN_MS = 1000;

const SIGNATURE_HEADER = 'x-sluice-signature';
const TIMESTAMP_HEADER = 'x-sluice-timestamp';
const TIMESTAMPED_SIGNATURE_HEADER = 'x-sluice-signature-timestamped';

/** `sha256=<hex>` over the exact bytes sent, so receivers verify before parsing. */
function sign(secret: string, ...parts: (Buffer | string)[]): string {
  const hmac = createHmac('sha256', secret);
  for (const part of parts) hmac.update(part);
  return `sha256=${hmac.digest('hex')}`;
}

/**
 * The signature headers: the body's, and one over `<timestamp>.<body>` with the unix second the
 * attempt was sent, so a receiver can refuse a recorded delivery replayed later (the body's own
 * `created_at` is the caller's to set).
 */
function signatureHeaders(secret: string, body: Buffer | string, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return {
    [SIGNATURE_HEADER]: sign(secret, body),
    [TIMESTAMP_HEADER]: timestamp,
    [TIMESTAMPED_SIGNATURE_HEADER]: sign(secret, `${timestamp}.`, body),
  };
}

/** RFC 9110 token characters: what a header name may hold. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Framing headers the HTTP client (undici) refuses or owns: every call would fail. `Host` is sent as configured. */
const CLIENT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect']);

/** Why a configured header cannot be sent (every call would fail), or null. */
function headerProblem(header: string, value: string): string | null {
  if (!HEADER_NAME.test(header)) return 'is not a valid header name';
  if (/[\r\n\0]/.test(value)) return 'has a line break or NUL in its value';
  if (CLIENT_HEADERS.has(header)) return 'is a framing header the HTTP client sets itself';
  return null;
}

/** POSTs the action as JSON to a configured URL through its own keep-alive connection pool. */
export class WebhookProvider implements Provider {
  readonly type = 'webhook';
  readonly #url: URL;
  readonly #headers: Record<string, string>;
  readonly #opts: WebhookOptions;
  /** Its keep-alive pool, made on the first call (undici is loaded then). */
  #agent: Agent | undefined;

  constructor(
    readonly name: string,
    opts: WebhookOptions,
  ) {
    this.#url = new URL(opts.url);
    if (this.#url.protocol !== 'http:' && this.#url.protocol !== 'https:') {
      throw new ProviderError('CONFIGURATION', `webhook "${name}": url must be http(s), got ${this.#url.protocol}`, { retryable: false });
    }
    if (this.#url.username !== '' || this.#url.password !== '') {
      // fetch-style clients drop them silently: the calls would go out unauthenticated.
      throw new ProviderError('CONFIGURATION', `webhook "${name}": credentials in the url are not sent; put them in headers (Authorization)`, {
        retryable: false,
      });
    }
    this.#opts = opts;
    // Lower-case names so a configured Content-Type cannot end up sent twice next to ours.
    this.#headers = Object.fromEntries(Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    for (const [header, value] of Object.entries(this.#headers)) {
      const problem = headerProblem(header, value);
      if (problem) throw new ProviderError('CONFIGURATION', `webhook "${name}": header ${JSON.stringify(header)} ${problem}`, { retryable: false });
    }
  }

  async execute(action: Action, ctx: ExecuteContext): Promise<ProviderResponse> {
    const body = this.#serialize(action);
    const headers: Record<string, string> = { ...this.#headers, 'content-type': 'application/json' };
    if (this.#opts.hmacSecret !== undefined) Object.assign(headers, signatureHeaders(this.#opts.hmacSecret, body, Date.now()));

    const timeoutMs = this.#opts.timeoutMs;
    const own = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const signal = own === undefined ? ctx.signal : AbortSignal.any([ctx.signal, own]);
    const signals = { ctx: ctx.signal, own, timeoutMs };

    let res: Dispatcher.ResponseData;
    try {
      const { Agent, request } = await loadUndici();
      this.#agent ??= new Agent({ keepAliveTimeout: 4_000 });
      res = await request(this.#url, { dispatcher: this.#agent, method: 'POST', headers, body, signal });
    } catch (err) {
      throw this.#failed(err, signals);
    }
    try {
      if (res.statusCode < 200 || res.statusCode >= 300) {
        // Read (bounded) and discard, so the connection goes back to the pool.
        await res.body.dump({ limit: ERROR_BODY_DRAIN_BYTES, signal: AbortSignal.timeout(ERROR_BODY_DRAIN_MS) }).catch(() => undefined);
        throw statusError(this.name, res.statusCode, res.headers);
      }
      const contentLength = res.headers['content-length'];
      const tooLarge = () =>
        new ProviderError('EXECUTION_FAILED', `webhook "${this.name}" response exceeds max_response_bytes (${this.#opts.maxResponseBytes})`, {
          retryable: false,
        });
      const raw = await readBounded(res.body, this.#opts.maxResponseBytes, typeof contentLength === 'string' ? contentLength : undefined, tooLarge);
      const contentType = res.headers['content-type'];
      return {
        status: 'success',
        body: parseBody(raw, typeof contentType === 'string' ? contentType : undefined, this.#opts.maxJsonDepth),
        headers: flattenHeaders(res.headers),
      };
    } catch (err) {
      if (!res.body.destroyed) res.body.destroy();
      throw this.#failed(err, signals);
    }
  }

  /** What a failed call throws; the client's own message, which names the address, goes to the debug log only. */
  #failed(err: unknown, signals: Parameters<typeof classifyRequestError>[2]): ProviderError {
    const failure = classifyRequestError(err, this.name, signals);
    if (failure !== err)
      this.#opts.log?.('debug', { provider: this.name, code: failure.code, detail: err instanceof Error ? err.message : String(err) }, 'webhook call failed');
    return failure;
  }

  async close(): Promise<void> {
    await this.#agent?.close();
  }

  #serialize(action: Action): Buffer {
    try {
      return Buffer.from(JSON.stringify({ ...actionView(action), created_at: action.created_at }), 'utf8');
    } catch (err) {
      throw new ProviderError('SERIALIZATION', `webhook "${this.name}": action is not JSON-serialisable`, { retryable: false, cause: err });
    }
  }
}
