import type { Readable } from 'node:stream';

/** Response headers as undici hands them over. */
export type HeaderMap = Record<string, string | string[] | undefined>;

/**
 * Reads at most `maxBytes` of a response body. A bigger body fails with `tooLarge()` (truncating
 * would hand callers a corrupt JSON document); the stream is destroyed, not drained.
 */
export async function readBounded(body: Readable, maxBytes: number, declaredLength: string | undefined, tooLarge: () => Error): Promise<Buffer> {
  if (declaredLength !== undefined && Number(declaredLength) > maxBytes) {
    body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop early (throw) makes the async iterator destroy the stream.
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/**
 * JSON when the upstream says so (falling back to text if it lies), text otherwise, null when
 * empty. JSON nested deeper than `maxDepth` is handed on as its text too: `JSON.parse` takes any
 * depth, but serialising the value for the answer or a chain run would overflow the stack after the
 * call succeeded (the gateway's own bodies stop at `server.max_json_depth`, the limit given here).
 */
export function parseBody(raw: Buffer, contentType: string | undefined, maxDepth: number): unknown {
  if (raw.length === 0) return null;
  const text = raw.toString('utf8');
  if (contentType !== undefined && /[/+]json\b/i.test(contentType)) {
    try {
      const value = JSON.parse(text) as unknown;
      return nestedDeeperThan(value, maxDepth) ? text : value;
    } catch {
      return text;
    }
  }
  return text;
}

/** Whether objects and arrays nest deeper than `max` levels (walked with a stack of its own, not the call stack). */
function nestedDeeperThan(root: unknown, max: number): boolean {
  const stack: { value: object; depth: number }[] = [];
  if (root !== null && typeof root === 'object') stack.push({ value: root, depth: 0 });
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.depth >= max) return true;
    for (const child of Object.values(next.value)) {
      if (child !== null && typeof child === 'object') stack.push({ value: child as object, depth: next.depth + 1 });
    }
  }
  return false;
}

/** ProviderResponse headers are plain strings; repeated headers are joined the HTTP way. */
export function flattenHeaders(headers: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
