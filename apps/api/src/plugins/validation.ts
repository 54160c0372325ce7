import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { errors } from '@sluice/core';
import type { FastifyInstance } from 'fastify';
import { forbiddenKeyPath } from './forbidden-json-key.js';

/** zod emits these formats; each also carries a pattern, so Ajv knows the names and leaves checking to the pattern. */
export const KNOWN_FORMATS = ['date-time', 'date', 'time', 'duration', 'uri', 'email', 'uuid', 'ipv4', 'ipv6'] as const;

/** Refuses bytes that are not UTF-8; keeps a BOM, which the JSON parser drops (one, as before). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function makeAjv(coerce: boolean): Ajv2020 {
  return new Ajv2020({
    allErrors: false,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: true,
    formats: Object.fromEntries(KNOWN_FORMATS.map((f) => [f, true])),
  });
}

/** The first top-level field of a coerced query or params object that came out as ±Infinity or NaN. */
function nonFiniteField(data: unknown): string | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === 'number' && !Number.isFinite(value)) return key;
  }
  return undefined;
}

/**
 * Ajv coerces `"1e400"` (or `"Infinity"`) to Infinity, which passes `type: integer`, and skips
 * `minimum`/`maximum` for numbers that are not finite: `?limit=1e400` came through as Infinity
 * (a 200 with `"limit":null`, or a 500 from the store for `offset`). Such a value is refused as
 * any other out-of-range one.
 */
function finiteNumbersOnly(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown) => {
    if (!validate(data)) {
      wrapped.errors = validate.errors ?? null;
      return false;
    }
    const field = nonFiniteField(data);
    if (field === undefined) {
      wrapped.errors = null;
      return true;
    }
    const error: ErrorObject = { instancePath: `/${field}`, schemaPath: '#/type', keyword: 'type', params: {}, message: 'must be a finite number' };
    wrapped.errors = [error];
    return false;
  }) as ValidateFunction;
  return wrapped;
}

/**
 * A body schema that lists its fields, every one optional: no body at all means `{}` there. A free
 * object (a rule definition) is not one: its fields are checked past the schema, and an empty
 * body there stays an error.
 */
function optionalBody(schema: unknown): boolean {
  const s = schema as { type?: unknown; properties?: unknown; required?: unknown[] } | undefined;
  return s?.type === 'object' && s.properties !== undefined && (s.required === undefined || s.required.length === 0);
}

/**
 * Fastify validates an absent body as `null`: `POST /v1/dlq/drain` with no body was a 400
 * "(root) must be object" although every field is optional. Here it is `{}` (defaults applied).
 */
function absentBodyAsEmpty(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown) => {
    if (data !== null) {
      const ok = validate(data);
      wrapped.errors = validate.errors ?? null;
      return ok;
    }
    const empty = {};
    if (validate(empty)) {
      wrapped.errors = null;
      // Fastify's custom-validator contract: `{value}` replaces the request's body.
      return { value: empty };
    }
    wrapped.errors = validate.errors ?? null;
    return false;
  }) as ValidateFunction;
  return wrapped;
}

/**
 * Fastify's built-in Ajv speaks draft-07; our schemas are 2020-12. Bodies are validated as
 * sent (no type coercion: `"tenant": 5` is an error, not "5"); query strings and params are
 * strings on the wire, so they are coerced, and a number that coerces to ±Infinity is refused.
 */
export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const queryAjv = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'body') return optionalBody(schema) ? absentBodyAsEmpty(bodyAjv.compile(schema)) : bodyAjv.compile(schema);
    return finiteNumbersOnly(queryAjv.compile(schema));
  });
  // JSON text is UTF-8 (RFC 8259): a body that is not is INVALID_JSON, not decoded with U+FFFD in
  // place of its bad bytes (a tenant "ac\xffme" became "ac\ufffdme"). Then Fastify's own parser.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = UTF8.decode(body as Buffer);
    } catch {
      done(errors.invalidJson('the body is not valid UTF-8'), undefined);
      return;
    }
    // `Content-Type: application/json` with nothing after it, where no body is needed (a trip,
    // a drain with every filter optional): no body, not INVALID_JSON. Where one is, still INVALID_JSON.
    const bodySchema: unknown = request.routeOptions.schema?.body;
    if (text === '' && (bodySchema === undefined || optionalBody(bodySchema))) {
      done(null, undefined);
      return;
    }
    parseJson(request, text, (err, parsed) => {
      // A literal `null` is a body, not its absence: taken for `{}`, it passed where nothing may (a PUT bumped updated_at).
      if (err === null && parsed === null) return done(errors.validation([{ path: 'body', message: 'must not be null' }]), undefined);
      if (err === null) return done(null, parsed);
      done(forbiddenKeyError(text) ?? err, undefined);
    });
  });
  // Only JSON bodies exist in this API: without the default text/plain parser, a text body is a 415, not a 400.
  app.removeContentTypeParser('text/plain');
  // Responses are documented with schemas but serialized as-is: the schema must never drop a field.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}

/** When a refused body is JSON after all, the refusal was a forbidden key: say which. */
function forbiddenKeyError(text: string): Error | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const path = forbiddenKeyPath(parsed);
  return path === null ? null : errors.validation([{ path, message: 'is not allowed (a key that could change object prototypes)' }]);
}
