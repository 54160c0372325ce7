/** The `telemetry.tracing` config section, as the tracing setup reads it (libs/config validates it). */
export interface TracingSettings {
  enabled: boolean;
  exporter: 'otlp-http' | 'otlp-grpc' | 'console' | 'none';
  endpoint?: string | undefined;
  service_name?: string | undefined;
  sample_ratio?: number | undefined;
  headers: Record<string, string>;
}

/** Config first, then the standard OTEL_* variable, then the default. */
export function serviceName(settings: TracingSettings, env: NodeJS.ProcessEnv): string {
  return settings.service_name ?? env.OTEL_SERVICE_NAME ?? 'sluice';
}

export function sampleRatio(settings: TracingSettings, env: NodeJS.ProcessEnv): number {
  if (settings.sample_ratio !== undefined) return settings.sample_ratio;
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const fromEnv = Number(raw);
  return raw !== undefined && raw !== '' && fromEnv >= 0 && fromEnv <= 1 ? fromEnv : 1;
}

/**
 * How `otlp-http` encodes spans: protobuf, the OTLP default for HTTP (and about half the CPU of
 * JSON per span), unless OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (else OTEL_EXPORTER_OTLP_PROTOCOL)
 * says `http/json`.
 */
export function otlpHttpEncoding(env: NodeJS.ProcessEnv): 'protobuf' | 'json' {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  return protocol === 'http/json' ? 'json' : 'protobuf';
}

/**
 * The exporter's URL when the config names the collector: its base URL plus the OTLP/HTTP path.
 * Undefined leaves the exporter to the OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT variables and their defaults.
 */
export function exportUrl(settings: TracingSettings): string | undefined {
  if (settings.endpoint === undefined) return undefined;
  if (settings.exporter !== 'otlp-http') return settings.endpoint;
  return `${settings.endpoint.replace(/\/+$/, '')}/v1/traces`;
}
