import type { StartTracingOptions, Tracing } from './start-tracing.js';
import type { TracingSettings } from './tracing-settings.js';

export type { StartTracingOptions, Tracing } from './start-tracing.js';

/**
 * Starts tracing when `settings.enabled`, else returns null. The OpenTelemetry SDK, its
 * exporters and instrumentations are imported only then: a process without tracing never
 * loads them (start-up time, memory).
 */
export async function startTracing(settings: TracingSettings, opts: StartTracingOptions): Promise<Tracing | null> {
  if (!settings.enabled) return null;
  const { startTracingSdk } = await import('./start-tracing.js');
  return startTracingSdk(settings, opts);
}
