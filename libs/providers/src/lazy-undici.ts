type Undici = typeof import('undici');

let loading: Promise<Undici> | undefined;

/**
 * undici, imported on first use (a webhook call, an LLM guardrail's request), not at start-up:
 * a default `sluice serve`, which calls no HTTP endpoint, holds 2.6 MB less heap idle without it
 * (Node 24; docs/performance.md#idle-memory).
 */
export function loadUndici(): Promise<Undici> {
  loading ??= import('undici');
  return loading;
}
