import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { logThrottle } from '@sluice/telemetry';
import { SluiceError, errors, isBackendConnectionError, isUnmigratedDatabaseError, type ErrorDetail } from '@sluice/core';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { formatMessage } from './format-messages.js';

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/**
 * An `anyOf` (a nullable field: a number or null) that no branch matched comes as each branch's
 * error plus its own: `must be <= 10; must be null; must match a schema in anyOf`. What the
 * client needs is the branch its value's type chose (`must be <= 10`); when its type matched no
 * branch, the types it may have (`must be integer or null`).
 */
function withoutBranchNoise(list: readonly AjvLikeError[]): AjvLikeError[] {
  const at = (e: AjvLikeError) => e.instancePath ?? '';
  const within = (e: AjvLikeError, path: string) => path === '' || at(e) === path || at(e).startsWith(`${path}/`);
  const anyOfPaths = new Set(list.filter((e) => e.keyword === 'anyOf').map(at));
  if (anyOfPaths.size === 0) return [...list];
  const errors = list.filter((e) => e.keyword !== 'anyOf');
  // A branch whose type the value does not have says so at the anyOf's own path: noise, unless
  // every branch says it (no type matched), and then one message names the types allowed.
  const branchType = (e: AjvLikeError) => e.keyword === 'type' && anyOfPaths.has(at(e));
  const noTypeMatched = [...anyOfPaths].flatMap((path) => {
    const inside = errors.filter((e) => within(e, path));
    if (!inside.every((e) => e.keyword === 'type' && at(e) === path)) return [];
    const types = new Set(inside.map((e) => String(e.params?.type ?? '')).filter(Boolean));
    return [{ instancePath: path, keyword: 'type', message: `must be ${[...types].join(' or ')}` }];
  });
  return [...errors.filter((e) => !branchType(e)), ...noTypeMatched];
}

/** `/actions/0` + missing `tenant` → `actions.0.tenant`; non-body parts are prefixed (`querystring.dry_run`). */
function validationDetails(list: readonly AjvLikeError[], context: string | undefined): ErrorDetail[] {
  return withoutBranchNoise(list).map((e) => {
    const parts = (e.instancePath ?? '').split('/').filter(Boolean);
    const missing = e.params?.missingProperty;
    if (typeof missing === 'string') parts.push(missing);
    const extra = e.params?.additionalProperty;
    if (typeof extra === 'string') parts.push(extra);
    if (context && context !== 'body') parts.unshift(context);
    return { path: parts.join('.'), message: formatMessage(e.params?.pattern) ?? e.message ?? 'is invalid' };
  });
}

/** The media type a request sent (without parameters, bounded: it is echoed in the message). */
function mediaTypeOf(request: FastifyRequest | undefined): string {
  const header = request?.headers['content-type'];
  return (header?.split(';')[0] ?? '').trim().slice(0, 128);
}

/**
 * Maps anything thrown on the request path to a SluiceError; unknown errors become a bare 500.
 * No Fastify code (`FST_ERR_…`) reaches a client: the ones a request can cause are named here,
 * and any other 4xx of Fastify's becomes the generic code of its status.
 */
function toSluiceError(err: unknown, request?: FastifyRequest): SluiceError {
  if (err instanceof SluiceError) return err;
  const fe = err as FastifyError & { validation?: AjvLikeError[]; validationContext?: string; type?: string };
  // A client that went away mid-body is an ECONNRESET too, with a 4xx status: not an outage.
  const clientSide = typeof fe.statusCode === 'number' && fe.statusCode < 500;
  if (!clientSide && isBackendConnectionError(err)) return errors.stateUnavailable(err);
  if (isUnmigratedDatabaseError(err))
    return errors.notReady('the audit database is not migrated yet: workers migrate it when they start, or run `sluice migrate`');
  if (Array.isArray(fe.validation)) return errors.validation(validationDetails(fe.validation, fe.validationContext));
  switch (fe.code) {
    // Fastify's message no longer names the type; the request's header does.
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE':
      return errors.unsupportedMediaType(mediaTypeOf(request));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson('body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson(fe.message);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.badRequest('request body size does not match Content-Length');
    // The router's (through frameworkErrors): a path with broken percent-encoding, a path parameter over maxParamLength (100).
    case 'FST_ERR_BAD_URL':
      return errors.badRequest('malformed URL: the path is not valid percent-encoding');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return errors.badRequest('a path parameter is too long');
  }
  if (err instanceof SyntaxError && fe.statusCode === 400) return errors.invalidJson(err.message);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 404) return errors.notFoundMessage(fe.message);
    if (fe.statusCode === 413) return errors.payloadTooLarge();
    if (fe.statusCode === 415) return errors.unsupportedMediaType(mediaTypeOf(request));
    return errors.badRequest(fe.message);
  }
  return errors.internal(err);
}

/**
 * One error body everywhere: {error, code} plus details/extra fields and the headers its code
 * calls for; never a stack trace. Routes that answer an error without logging it (a polled
 * /ready) send it through here too.
 */
export function sendError(reply: FastifyReply, e: SluiceError): FastifyReply {
  errorHeaders(reply, e);
  return reply.status(e.statusCode).send({ error: e.message, code: e.code, ...(e.details ? { details: e.details } : {}), ...e.extra });
}

/** The message alone as a JSON string: the error body of Alertmanager's API, which its clients (amtool) decode. */
function sendErrorString(reply: FastifyReply, e: SluiceError): FastifyReply {
  errorHeaders(reply, e);
  return reply.status(e.statusCode).type('application/json; charset=utf-8').send(JSON.stringify(e.message));
}

function errorHeaders(reply: FastifyReply, e: SluiceError): void {
  if (typeof e.extra?.retry_after === 'number') reply.header('retry-after', String(e.extra.retry_after));
  if (e.code === 'UNAUTHORIZED') reply.header('www-authenticate', 'Bearer realm="sluice"');
}

/** A refused request's reason is logged once per window per app: an outage refuses every request alike. */
const REFUSED_LOG_WINDOW_MS = 30_000;
const refusedLogThrottles = new WeakMap<ErrorHandlingOptions, (reason: string) => number | null>();

function refusedLogThrottle(opts: ErrorHandlingOptions): (reason: string) => number | null {
  let throttle = refusedLogThrottles.get(opts);
  if (throttle === undefined) {
    throttle = logThrottle(REFUSED_LOG_WINDOW_MS, Date.now);
    refusedLogThrottles.set(opts, throttle);
  }
  return throttle;
}

/** Logs a refused or failed request and answers it with the error body. */
function answerError(err: unknown, request: FastifyRequest, reply: FastifyReply, opts: ErrorHandlingOptions = {}, send = sendError): FastifyReply {
  let e = toSluiceError(err, request);
  if (e.code === 'PAYLOAD_TOO_LARGE' && opts.maxBodyBytes !== undefined) e = errors.payloadTooLarge(opts.maxBodyBytes);
  // An outage answers every request 503: one warn line per reason per 30 s, without a stack trace.
  if (e.code === 'STATE_UNAVAILABLE') {
    opts.onStateUnavailable?.();
    const reason = err instanceof Error ? err.message : String(err);
    const suppressed = refusedLogThrottle(opts)(reason);
    if (suppressed !== null) request.log.warn({ code: e.code, reason, suppressed }, 'request refused');
  } else if (e.statusCode >= 500) request.log.error({ err }, 'request failed');
  else request.log.info({ code: e.code, reason: e.message }, 'request rejected');
  return send(reply, e);
}

/** What the HTTP parser refused, as one of our errors. */
function clientErrorOf(err: ConnectionError): SluiceError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return errors.headersTooLarge();
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return errors.payloadTooLarge();
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return errors.requestTimeout();
    default:
      return errors.badRequest('malformed HTTP request');
  }
}

/**
 * Node's `clientError`: a request its HTTP parser refused (a malformed request line or header,
 * headers over the 16 KiB limit) or one that did not arrive in time. Answered on the raw socket
 * with the usual {error, code} body and `Connection: close`, then the connection is closed.
 */
function clientErrorHandler(err: ConnectionError, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // Bytes written after a response has started would corrupt it: then only close (as Node does).
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const e = clientErrorOf(err);
  const body = JSON.stringify({ error: e.message, code: e.code });
  const head = `HTTP/1.1 ${e.statusCode} ${STATUS_CODES[e.statusCode] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  socket.end(head + body, () => socket.destroy());
}

/**
 * Fastify constructor options for every app: the errors Fastify's router (a bad URL, a path
 * parameter over the length limit) and Node's HTTP parser answer before any route or error
 * handler runs get the same error body as everything else.
 */
export const edgeErrorOptions = {
  frameworkErrors: (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // The router runs before any scope's error handler: Alertmanager's paths get their string errors here.
    answerError(err, request, reply, {}, request.url.startsWith(ALERTMANAGER_API) ? sendErrorString : undefined);
  },
  clientErrorHandler,
} satisfies Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler'>;

export interface ErrorHandlingOptions {
  maxBodyBytes?: number;
  /** Called for each request refused because the state backend is away or full (sluice_state_errors_total). */
  onStateUnavailable?: () => void;
}

export function installErrorHandling(app: FastifyInstance, opts: ErrorHandlingOptions): void {
  app.setErrorHandler((err, request, reply) => answerError(err, request, reply, opts));
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.routeNotFound(request.method, request.url.split('?')[0] ?? '')));
}

/** Where Alertmanager's API lives: its errors are bare JSON strings, its reads take what its clients send. */
export const ALERTMANAGER_API = '/api/v2/';

/** In a plugin scope of Alertmanager-compatible routes: the same handling, errors answered as Alertmanager does (a JSON string). */
export function installAlertmanagerErrorHandling(scope: FastifyInstance, opts: ErrorHandlingOptions): void {
  scope.setErrorHandler((err, request, reply) => answerError(err, request, reply, opts, sendErrorString));
}
