import { loadUndici, readBounded } from '@sluice/providers';
import type { z } from 'zod';

/** An answer bigger than this is refused: a chat verdict or one embedding is a few tens of KiB. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

class AnswerTooLarge extends Error {}

/**
 * POSTs JSON to an OpenAI-compatible API (`<endpoint><path>`) and returns the parsed answer;
 * throws on a non-2xx status, a timeout, a body over MAX_ANSWER_BYTES or one that is not JSON. The key goes in
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
    const declared = res.headers['content-length'];
    const tooLarge = () => new AnswerTooLarge(`${path} answered more than ${MAX_ANSWER_BYTES} bytes`);
    text = (await readBounded(res.body, MAX_ANSWER_BYTES, typeof declared === 'string' ? declared : undefined, tooLarge)).toString('utf8');
  } catch (err) {
    if (err instanceof AnswerTooLarge) throw err;
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

/**
 * `value` as `schema` reads it; otherwise an error naming the first problem only. A zod error's
 * message lists every issue (and every unexpected key), and an upstream's answer, which a
 * tenant's payload can steer, would otherwise grow the outcome, the audit record and the log.
 */
export function parseAnswer<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const at = first === undefined || first.path.length === 0 ? '' : ` at ${first.path.slice(0, 8).join('.')}`.slice(0, 120);
  throw new Error(`${what} does not have the expected shape (${first?.code ?? 'invalid'}${at})`);
}
