import createClient, { type Client } from 'openapi-fetch';
import { apiErrorOf, dataOf } from './errors.js';
import { streamEvents, type StreamEvent } from './event-stream.js';
import type { paths } from './generated/openapi.js';
import { retryingFetch } from './retrying-fetch.js';

type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : never;

/** An action as `POST /v1/dispatch` takes it. @public */
export type ActionInput = Json<'/v1/dispatch', 'post'>;
/** What a dispatch answered (its `outcome` says which). @public */
export type DispatchOutcome = Ok<'/v1/dispatch', 'post'>;
/** What a batch answered: one result per action, in order. @public */
export type BatchResponse = Ok<'/v1/dispatch/batch', 'post'>;
/** The filters of the live stream. @public */
export type StreamFilters = NonNullable<paths['/v1/stream']['get']['parameters']['query']>;

export interface SluiceClientOptions {
  /** The gateway, e.g. `http://localhost:8080`. */
  url: string;
  /** Sent as `Authorization: Bearer` (an API key or a JWT from /v1/auth/login). */
  apiKey?: string;
  /** Attempts after the first on 429 and 503 (default 3), each after the answer's Retry-After. */
  retries?: number;
  /** The longest wait between attempts (default 30 000 ms): an answer asking for a longer one is returned (thrown) at once. */
  maxRetryDelayMs?: number;
  /** The fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Options of a dispatch. @public */
export interface DispatchOptions {
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface SluiceClient {
  /** Every endpoint, typed from the OpenAPI document (openapi-fetch: `api.GET('/v1/rules')`…), with the same retries. */
  readonly api: Client<paths>;
  /**
   * Dispatches one action; its `id` is set here when absent, so a retried request carries the same id. Throws SluiceApiError.
   * `signal` abandons the request (and its retries); e.g. `AbortSignal.timeout(5000)`.
   */
  dispatch(action: ActionInput, opts?: DispatchOptions): Promise<DispatchOutcome>;
  /** Dispatches up to 1000 actions (ids set as in dispatch); results in input order. Throws SluiceApiError. */
  dispatchBatch(actions: readonly ActionInput[], opts?: DispatchOptions): Promise<BatchResponse>;
  /**
   * The live stream: frames as they come, until the loop breaks or `signal` aborts. Throws SluiceApiError when refused,
   * and SluiceStreamClosed when the gateway ends it (a replica shutting down, the caller's credentials revoked or expired).
   * `onOpen` is called once the gateway has accepted the subscription (from then on no event is missed).
   */
  stream(filters?: StreamFilters, opts?: { signal?: AbortSignal; onOpen?: () => void }): AsyncGenerator<StreamEvent>;
}

/**
 * Rejects with the signal's reason once it aborts, whatever the request does. The fetch gets the
 * signal too (to close its socket), but follows it through weak references: a timeout signal
 * nothing else held could be collected before it fired, leaving the call to hang. This listener
 * holds it.
 */
function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => {}); // it fails the same way: its rejection is this one
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A typed client of a Sluice gateway. The types come from the gateway's OpenAPI document
 * (src/generated/openapi.ts, checked against the live document by a test), so they cannot drift.
 */
export function createSluiceClient(opts: SluiceClientOptions): SluiceClient {
  const base = opts.fetch ?? ((request: Request) => fetch(request));
  const send = retryingFetch(base, { retries: opts.retries ?? 3, maxDelayMs: opts.maxRetryDelayMs ?? 30_000 });
  const headers = opts.apiKey === undefined ? {} : { authorization: `Bearer ${opts.apiKey}` };
  const api = createClient<paths>({ baseUrl: opts.url.replace(/\/+$/, ''), fetch: send, headers });
  const withId = (action: ActionInput): ActionInput => (action.id === undefined ? { ...action, id: crypto.randomUUID() } : action);

  return {
    api,
    dispatch(action, { dryRun = false, signal } = {}) {
      return abortable(
        dataOf(api.POST('/v1/dispatch', { body: withId(action), params: { query: { dry_run: dryRun } }, ...(signal ? { signal } : {}) })),
        signal,
      );
    },
    dispatchBatch(actions, { dryRun = false, signal } = {}) {
      return abortable(
        dataOf(
          api.POST('/v1/dispatch/batch', {
            body: { actions: actions.map(withId) },
            params: { query: { dry_run: dryRun } },
            ...(signal ? { signal } : {}),
          }),
        ),
        signal,
      );
    },
    async *stream(filters = {}, { signal, onOpen } = {}) {
      const { error, response } = await api.GET('/v1/stream', {
        params: { query: filters },
        parseAs: 'stream',
        headers: { accept: 'text/event-stream' },
        ...(signal ? { signal } : {}),
      });
      if (!response.ok) throw apiErrorOf(response, error);
      onOpen?.();
      yield* streamEvents(response);
    },
  };
}
