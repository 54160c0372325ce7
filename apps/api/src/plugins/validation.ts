import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';

/** zod emits these formats; each also carries a pattern, so Ajv knows the names and leaves checking to the pattern. */
const KNOWN_FORMATS = ['date-time', 'date', 'time', 'duration', 'uri', 'email', 'uuid', 'ipv4', 'ipv6'] as const;

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

/**
 * Fastify's built-in Ajv speaks draft-07; our schemas are 2020-12. Bodies are validated as
 * sent (no type coercion: `"tenant": 5` is an error, not "5"); query strings and params are
 * strings on the wire, so they are coerced.
 */
export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const queryAjv = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : queryAjv;
    return ajv.compile(schema);
  });
  // Only JSON bodies exist in this API: without the default text/plain parser, a text body is a 415, not a 400.
  app.removeContentTypeParser('text/plain');
  // Responses are documented with schemas but serialized as-is: the schema must never drop a field.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}
