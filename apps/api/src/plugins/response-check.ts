import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { KNOWN_FORMATS } from './validation.js';

/**
 * For tests and development: every response is checked against the schema its route documents
 * for that status before it is sent, and one that does not match becomes a 500 naming the route
 * and the differences. Responses are serialized as-is (validation.ts), so nothing else holds the
 * OpenAPI document, and the clients generated from it, to what the handlers really send.
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
}
