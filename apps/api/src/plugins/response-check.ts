import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { KNOWN_FORMATS } from './validation.js';

/**
 * For tests and development: every response is checked against the schema its route documents
 * for that status before it is sent, and one that does not match, or whose status the route does
 * not document, becomes a 500 naming the route and the differences. Responses are serialized
 * as-is (validation.ts), so nothing else holds the OpenAPI document, and the clients generated
 * from it, to what the handlers really send.
 */
export function installResponseCheck(app: FastifyInstance): void {
  const ajv = new Ajv2020({ allErrors: true, strict: false, formats: Object.fromEntries(KNOWN_FORMATS.map((f) => [f, true])) });
  app.setSerializerCompiler(({ schema, method, url, httpStatus }) => {
    const validate = ajv.compile(schema as object);
    return (data) => {
      const text = JSON.stringify(data);
      // The wire form is what a client sees (Dates as strings, no undefined fields).
      if (!validate(text === undefined ? undefined : JSON.parse(text))) {
        throw new Error(`the ${httpStatus} response of ${method} ${url} does not match its documented schema: ${ajv.errorsText(validate.errors)}`);
      }
      return text;
    };
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const documented = request.routeOptions.schema?.response as Record<string, unknown> | undefined;
    const status = reply.statusCode;
    // A 500 is never planned for, so never documented; a route without response schemas is not checked.
    if (documented === undefined || status === 500 || documentsStatus(documented, status)) return done(null, payload);
    const message = `${request.method} ${request.routeOptions.url} answered ${status}, which its documented responses do not list`;
    request.log.error({ err: new Error(message) }, 'response check');
    reply.code(500);
    done(null, JSON.stringify({ code: 'INTERNAL', message }));
  });
}

function documentsStatus(documented: Record<string, unknown>, status: number): boolean {
  return String(status) in documented || `${String(status)[0]}xx` in documented || 'default' in documented;
}
