import { ErrorBody } from '@sluice/core';
import { responseSchema } from '@sluice/http';
import type { FastifyInstance } from 'fastify';

const error = responseSchema(ErrorBody);

type Described = (description: string) => Record<string, unknown>;
const asErrorBody: Described = (description) => ({ ...error, description });
/** Routes of Alertmanager's API answer their errors as a bare JSON string, as Alertmanager does. */
const asString: Described = (description) => ({ type: 'string', description });

/** What any protected route can answer, whatever it does (auth, rate limits, the state backend). */
const protectedErrors = (described: Described) => ({
  401: described('UNAUTHORIZED: authentication is on and the request carries no valid credential'),
  403: described("FORBIDDEN: the caller's role or grants do not allow it"),
  429: described('RATE_LIMITED: rate_limit is on and the caller (or a dispatched tenant) is over its window; retry_after and Retry-After say when'),
  503: described('STATE_UNAVAILABLE: the state backend is away or full (nothing was done); retry_after and Retry-After'),
});

/** What a request whose path or query parameters are checked can answer before its route runs. */
const parameterErrors = (described: Described) => ({
  400: described('VALIDATION_FAILED, BAD_REQUEST: the path or query parameters are refused (details name them)'),
});

/** What a public write can answer before its route runs: the browser guard refuses cross-site writes. */
const publicWriteErrors = (described: Described) => ({
  403: described('FORBIDDEN: a browser sent it from another site (Sec-Fetch-Site, or Origin, not this origin)'),
});

/** What a request without a body schema can answer when it carries a body that is not JSON. */
const bodylessErrors = (described: Described) => ({
  415: described('UNSUPPORTED_MEDIA_TYPE: a body that is not application/json (UTF-8)'),
});

/** What any request with a body can answer before its route runs. */
const bodyErrors = (described: Described) => ({
  400: described('INVALID_JSON, VALIDATION_FAILED, BAD_REQUEST: the body or parameters are refused (details name the paths)'),
  408: described('REQUEST_TIMEOUT: the body did not arrive within server.request_timeout_seconds'),
  413: described('PAYLOAD_TOO_LARGE: the body is over server.max_body_bytes'),
  415: described('UNSUPPORTED_MEDIA_TYPE: not application/json (UTF-8)'),
});

/** A route whose own errors are declared as strings gets its added ones as strings too. */
function errorShape(response: Record<string, unknown>): Described {
  const declared = Object.entries(response).filter(([status]) => /^[45]/.test(status));
  return declared.some(([, schema]) => (schema as { type?: unknown }).type === 'string') ? asString : asErrorBody;
}

/**
 * Completes each route's documented responses with the errors the gateway's own layers answer
 * before (or around) its handler, so the OpenAPI document lists every status a client can get;
 * a route's own declaration of a status wins. Registered after access control (which marks the
 * public routes) and before the OpenAPI plugin (which copies each route as it is added).
 */
export function installErrorResponses(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (route.schema === undefined || response === undefined) return;
    const methods = [route.method].flat();
    const described = errorShape(response);
    const publicRoute = route.config?.access === 'public';
    const writes = methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE');
    const added = {
      ...(publicRoute ? (writes ? publicWriteErrors(described) : {}) : protectedErrors(described)),
      ...(route.schema.params !== undefined || route.schema.querystring !== undefined ? parameterErrors(described) : {}),
      ...(methods.includes('DELETE') ? bodylessErrors(described) : {}),
      ...(methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH') ? bodyErrors(described) : {}),
    };
    route.schema = { ...route.schema, response: { ...added, ...response } };
  });
}
