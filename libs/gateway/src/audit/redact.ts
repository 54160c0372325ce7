/**
 * Returns a copy of the payload with each dot-separated path (`card.number`, `items.0.sku`)
 * replaced by the placeholder where it exists. The input is never modified.
 */
export function redactPayload(payload: Record<string, unknown>, paths: readonly string[], placeholder: string): Record<string, unknown> {
  if (paths.length === 0) return payload;
  const copy = structuredClone(payload);
  for (const path of paths) {
    const parts = path.split('.');
    let node: unknown = copy;
    for (let i = 0; i < parts.length - 1 && node !== null && typeof node === 'object'; i++) {
      node = (node as Record<string, unknown>)[parts[i] as string];
    }
    const last = parts[parts.length - 1] as string;
    if (node !== null && typeof node === 'object' && Object.hasOwn(node, last)) (node as Record<string, unknown>)[last] = placeholder;
  }
  return copy;
}
