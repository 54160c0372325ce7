import { errors } from '@sluice/core';
import type { FastifyInstance } from 'fastify';

/** Methods whose body Fastify never parses: their Content-Type says nothing. */
const BODYLESS = new Set(['GET', 'HEAD', 'TRACE']);
const UTF8 = new Set(['utf-8', 'utf8']);

/** The `charset` parameter of a Content-Type header, lowercased and unquoted; undefined when there is none. */
function charsetOf(contentType: string): string | undefined {
  for (const param of contentType.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    return param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return undefined;
}

/**
 * Bodies are read as UTF-8 (the only charset JSON has, RFC 8259): a body declaring another
 * charset (`application/json; charset=utf-16`) is refused with 415 before it is parsed, rather
 * than decoded wrongly. No charset means UTF-8; `utf-8` and `utf8` are accepted in any case.
 * Checked after authentication, and not on unknown routes (their 404 comes first).
 */
export function installCharsetCheck(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const type = request.headers['content-type'];
    if (type === undefined || BODYLESS.has(request.method) || request.is404) return done(null, payload);
    const charset = charsetOf(type);
    if (charset === undefined || UTF8.has(charset)) return done(null, payload);
    done(errors.unsupportedCharset(charset.slice(0, 64)));
  });
}
