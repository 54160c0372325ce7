import { SluiceError, errors, type ErrorDetail } from '@sluice/core';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';

interface AjvLikeError {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `/actions/0` + missing `tenant` → `actions.0.tenant`; non-body parts are prefixed (`querystring.dry_run`). */
function validationDetails(list: readonly AjvLikeError[], context: string | undefined): ErrorDetail[] {
  return list.map((e) => {
    const parts = (e.instancePath ?? '').split('/').filter(Boolean);
    const missing = e.params?.missingProperty;
    if (typeof missing === 'string') parts.push(missing);
    const extra = e.params?.additionalProperty;
    if (typeof extra === 'string') parts.push(extra);
    if (context && context !== 'body') parts.unshift(context);
    return { path: parts.join('.'), message: e.message ?? 'is invalid' };
  });
}

/** Maps anything thrown on the request path to a SluiceError; unknown errors become a bare 500. */
function toSluiceError(err: unknown): SluiceError {
  if (err instanceof SluiceError) return err;
  const fe = err as FastifyError & { validation?: AjvLikeError[]; validationContext?: string; type?: string };
  if (Array.isArray(fe.validation)) return errors.validation(validationDetails(fe.validation, fe.validationContext));
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType(String(fe.message.split(': ').pop() ?? ''));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson('body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson(fe.message);
  }
  if (err instanceof SyntaxError && fe.statusCode === 400) return errors.invalidJson(err.message);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return fe.statusCode === 404 ? errors.notFoundMessage(fe.message) : errors.badRequest(fe.message);
  }
  return errors.internal(err);
}

/**
 * One error body everywhere: {error, code} plus details/extra fields and the headers its code
 * calls for; never a stack trace. Routes that answer an error without logging it (a polled
 * /ready) send it through here too.
 */
export function sendError(reply: FastifyReply, e: SluiceError): FastifyReply {
  if (e.code === 'RATE_LIMITED' && typeof e.extra?.retry_after === 'number') reply.header('retry-after', String(e.extra.retry_after));
  if (e.code === 'UNAUTHORIZED') reply.header('www-authenticate', 'Bearer realm="sluice"');
  return reply.status(e.statusCode).send({ error: e.message, code: e.code, ...(e.details ? { details: e.details } : {}), ...e.extra });
}

export function installErrorHandling(app: FastifyInstance, opts: { maxBodyBytes: number }): void {
  app.setErrorHandler((err, request, reply) => {
    let e = toSluiceError(err);
    if (e.code === 'PAYLOAD_TOO_LARGE') e = errors.payloadTooLarge(opts.maxBodyBytes);
    if (e.statusCode >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: e.code, msg: e.message }, 'request rejected');
    return sendError(reply, e);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, errors.routeNotFound(request.method, request.url.split('?')[0] ?? '')));
}
