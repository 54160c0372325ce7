/** Query parameters that are credentials (an approval link's `sig`, or a key a client put in the URL): their values are not logged. */
const SECRET_PARAMS = new Set(['sig', 'signature', 'token', 'access_token', 'api_key', 'apikey', 'key', 'password']);

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
    if (eq >= 0 && SECRET_PARAMS.has(paramName(name))) params[i] = `${name}=[REDACTED]`;
  }
  return `${url.slice(0, start + 1)}${params.join('&')}`;
}
