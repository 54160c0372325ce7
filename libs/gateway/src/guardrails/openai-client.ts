import { loadUndici } from '@sluice/providers';

/**
 * POSTs JSON to an OpenAI-compatible API (`<endpoint><path>`) and returns the parsed answer;
 * throws on a non-2xx status, a timeout or a body that is not JSON. The key goes in
 * `Authorization: Bearer` and is never logged.
 */
export async function postOpenAi(endpoint: string, path: string, body: unknown, opts: { apiKey: string | undefined; timeoutMs: number }): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.apiKey !== undefined) headers.authorization = `Bearer ${opts.apiKey}`;
  const { request } = await loadUndici();
  let res: Awaited<ReturnType<typeof request>>;
  let text: string;
  try {
    res = await request(`${endpoint.replace(/\/+$/, '')}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    text = await res.body.text();
  } catch (err) {
    // The client's own message names the endpoint's address; this one reaches outcomes and audit records, so it names the code only.
    const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
    throw new Error(`${path} could not be reached (${typeof code === 'string' ? code : String(name ?? 'error')})`, { cause: err });
  }
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`${path} answered ${res.statusCode}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${path} answered something that is not JSON`);
  }
}
