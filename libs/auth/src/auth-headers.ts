import { errors } from '@sluice/core';

/** Header values longer than this are refused without being looked at further. */
const MAX_CREDENTIAL_LENGTH = 8 * 1024;

export interface AuthHeaders {
  authorization?: string | string[] | undefined;
  'x-api-key'?: string | string[] | undefined;
}

export type PresentedCredential = { kind: 'bearer'; value: string } | { kind: 'api_key'; value: string };

const BEARER_RE = /^Bearer[ \t]+(\S+)$/i;
const BASIC_RE = /^Basic[ \t]+([A-Za-z0-9+/=]+)$/i;
const MALFORMED = 'malformed Authorization header: expected "Bearer <token or API key>" or "Basic" with the API key as the password';

/**
 * Which credential a request presents. `Authorization: Bearer` wins over `X-API-Key`; no header
 * at all is 401 `missing authentication credentials`. `Authorization: Basic` carries an API key
 * as its password (the user name is not read): what Prometheus's `basic_auth` and other
 * Alertmanager clients send. Messages never echo the header value.
 */
export function presentedCredential(headers: AuthHeaders): PresentedCredential {
  const authorization = single(headers.authorization, 'Authorization');
  if (authorization !== undefined) {
    if (authorization.length > MAX_CREDENTIAL_LENGTH) throw errors.unauthorized('Authorization header is too long');
    const text = authorization.trim();
    if (text === '') throw errors.unauthorized('empty Authorization header');
    const m = BEARER_RE.exec(text);
    if (m?.[1]) return { kind: 'bearer', value: m[1] };
    if (/^Bearer\b/i.test(text)) throw errors.unauthorized(MALFORMED);
    const basic = BASIC_RE.exec(text)?.[1];
    const decoded = basic === undefined ? '' : Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const password = colon < 0 ? '' : decoded.slice(colon + 1);
    if (password === '') throw errors.unauthorized(MALFORMED);
    return { kind: 'api_key', value: password };
  }
  const apiKey = single(headers['x-api-key'], 'X-API-Key');
  if (apiKey !== undefined) {
    if (apiKey.length > MAX_CREDENTIAL_LENGTH) throw errors.unauthorized('X-API-Key header is too long');
    const text = apiKey.trim();
    if (text === '') throw errors.unauthorized('empty X-API-Key header');
    return { kind: 'api_key', value: text };
  }
  throw errors.unauthorized('missing authentication credentials');
}

function single(value: string | string[] | undefined, name: string): string | undefined {
  if (!Array.isArray(value)) return value;
  if (value.length > 1) throw errors.unauthorized(`multiple ${name} headers`);
  return value[0];
}

/** Three dot-separated base64url parts: worth trying as a JWT before trying as an API key. */
export function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value);
}
