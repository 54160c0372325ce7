type Undici = typeof import('undici');

let loading: Promise<Undici> | undefined;

/**
 * undici, imported on first use (a webhook call, an LLM guardrail's request): with its HTTP
 * parser it is ≈ 7 MB of resident memory and 4 MB of heap that a process calling no HTTP
 * endpoint would carry idle.
 */
export function loadUndici(): Promise<Undici> {
  loading ??= import('undici');
  return loading;
}
