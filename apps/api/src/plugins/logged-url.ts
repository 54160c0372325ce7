/** Query parameters that are credentials (an approval link's `sig`, or a key a client put in the URL): their values are not logged. */
const SECRET_PARAMS = new Set([
  'sig',
  'signature',
  'api_key',
  'apikey',
  'key',
  'jwt',
  'auth',
  'authorization',
  'session',
  'session_id',
  'credential',
  'credentials',
]);
/** And any whose name ends so (`access_token`, `client_secret`, `passwd`…); not `_key`, which dedup and group keys end with. */
const SECRET_SUFFIXES = ['token', 'secret', 'password', 'passwd'];

function isSecretParam(name: string): boolean {
  return SECRET_PARAMS.has(name) || SECRET_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/** A parameter name as the query parser reads it: percent-decoded (`%73ig` is `sig`), case aside. */
function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/** The request URL as logged: credential parameters' values replaced, however their names are encoded. */
export function loggedUrl(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const params = url.slice(start + 1).split('&');
  for (let i = 0; i < params.length; i++) {
    const param = params[i] as string;
    const eq = param.indexOf('=');
    const name = eq < 0 ? param : param.slice(0, eq);
    if (eq >= 0 && isSecretParam(paramName(name))) params[i] = `${name}=[REDACTED]`;
  }
  return `${url.slice(0, start + 1)}${params.join('&')}`;
}
