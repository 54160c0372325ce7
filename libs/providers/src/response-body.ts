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

/** JSON when the upstream says so (falling back to text if it lies), text otherwise, null when empty. */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return null;
  const text = raw.toString('utf8');
  if (contentType !== undefined && /[/+]json\b/i.test(contentType)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
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
