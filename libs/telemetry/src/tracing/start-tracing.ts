import { register } from 'node:module';
import { setTimeout } from 'node:timers/promises';
import { DiagLogLevel, ROOT_CONTEXT, context, diag, propagation, trace, type Tracer } from '@opentelemetry/api';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as HttpProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { exportUrl, otlpHttpEncoding, sampleRatio, serviceName, type TracingSettings } from './tracing-settings.js';

/** What the rest of the process needs of tracing: spans of its own, the Fastify plugin, and a flush on shutdown. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Registers the request (server) span of every route: must be registered before the routes. */
  readonly fastifyPlugin: ReturnType<FastifyOtelInstrumentation['plugin']>;
  /** Sends the SDK's own warnings and errors (a collector that cannot be reached, spans dropped) to the process log. */
  reportTo(warn: (detail: { otel: string }, msg: string) => void): void;
  /** Exports what is buffered and unregisters the globals. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  /** `serve`, `api` or `worker`: a resource attribute, so one service's roles can be told apart. */
  role: string;
  /** Tests: spans go here (synchronously) instead of the configured exporter. */
  exporter?: SpanExporter;
  /**
   * Registers the ES-module loader hook through which the ioredis instrumentation patches
   * ioredis (ioredis is imported from ES modules). Only the CLI, before it loads the gateway,
   * can do this; an embedder that loads ioredis first gets no Redis spans.
   */
  hookEsmImports?: boolean;
  env?: NodeJS.ProcessEnv;
}

const TRACER_NAME = 'sluice';
/** How long shutdown waits for the last spans' export (the drain has already run). */
const SHUTDOWN_EXPORT_MS = 2000;

function exporterFor(settings: TracingSettings, env: NodeJS.ProcessEnv): SpanExporter | null {
  const url = exportUrl(settings);
  const headers = Object.keys(settings.headers).length > 0 ? settings.headers : undefined;
  switch (settings.exporter) {
    case 'otlp-http': {
      const options = { ...(url ? { url } : {}), ...(headers ? { headers } : {}) };
      return otlpHttpEncoding(env) === 'json' ? new HttpJsonTraceExporter(options) : new HttpProtobufTraceExporter(options);
    }
    case 'otlp-grpc':
      return new GrpcTraceExporter({ ...(url ? { url } : {}) });
    case 'console':
      return new ConsoleSpanExporter();
    case 'none':
      return null;
  }
}

/**
 * Starts OpenTelemetry tracing when `telemetry.tracing.enabled`: a tracer provider with a
 * parent-based ratio sampler, W3C trace-context propagation, and the maintained
 * instrumentations for what they cover (undici: provider HTTP calls, with `traceparent` injected;
 * ioredis: Redis commands; @fastify/otel: the request span, continuing an incoming
 * `traceparent`/`tracestate`). Only called with tracing on (start.ts): with it off nothing is
 * registered, and the request path takes no tracing branch at all.
 */
export async function startTracingSdk(settings: TracingSettings, opts: StartTracingOptions): Promise<Tracing> {
  const env = opts.env ?? process.env;
  let waitForHooks: (() => Promise<void>) | null = null;
  if (opts.hookEsmImports) {
    const channel = createAddHookMessageChannel();
    register('import-in-the-middle/hook.mjs', import.meta.url, channel.registerOptions);
    waitForHooks = channel.waitForAllMessagesAcknowledged;
  }
  const exporter = opts.exporter ?? exporterFor(settings, env);
  const spanProcessors: SpanProcessor[] =
    exporter === null ? [] : [opts.exporter || settings.exporter === 'console' ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)];
  const provider = new NodeTracerProvider({
    // OTEL_RESOURCE_ATTRIBUTES (the env detector) and the SDK's own attributes, then ours on top.
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ 'service.name': serviceName(settings, env), 'sluice.role': opts.role })),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(sampleRatio(settings, env)) }),
    spanProcessors,
  });
  // W3C trace context only: baggage would carry whatever a caller puts in it into job data and to
  // every provider. AsyncLocalStorage context, the SDK's default.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  // The request span only: a span per hook or for the handler would double the spans of a dispatch for nothing new.
  const fastify = new FastifyOtelInstrumentation({
    instrumentHooks: false,
    instrumentHandler: false,
    ignorePaths: (route) => isIgnoredPath(route.url),
    // The path without its query: a query can carry an approval link's signature or a key.
    requestHook: (span, request: { url: string }) => span.setAttribute('url.path', pathOf(request.url)),
  });
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new UndiciInstrumentation({
        ignoreRequestHook: carriesTraceparent,
        // A webhook URL's query (or userinfo) can be its secret: the span keeps origin and path
        // (the instrumentation also sets url.query on its own: emptied too).
        requestHook: (span, request) => {
          span.setAttribute('url.full', `${request.origin}${pathOf(request.path)}`);
          if (request.path.includes('?')) span.setAttribute('url.query', '');
        },
      }),
      // The command name only: arguments are keys, records and payloads (a CAS write carries the whole record).
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
      fastify,
    ],
  });
  await waitForHooks?.();
  let warnings: ((detail: { otel: string }, msg: string) => void) | undefined;
  return {
    tracer: provider.getTracer(TRACER_NAME),
    fastifyPlugin: fastify.plugin(),
    reportTo(warn) {
      // Outside any request's context: a collector's failure is not part of the dispatch whose span batch it was.
      warnings = (detail, msg) => context.with(ROOT_CONTEXT, () => warn(detail, msg));
      const report = (...args: unknown[]) => warnings?.({ otel: args.map(String).join(' ') }, 'tracing');
      const quiet = () => {};
      diag.setLogger({ error: report, warn: report, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);
    },
    async shutdown() {
      diag.disable();
      unregister();
      try {
        // A collector that is down or slow costs the last spans, not a failed shutdown.
        await Promise.race([
          provider.shutdown(),
          setTimeout(SHUTDOWN_EXPORT_MS, undefined, { ref: false }).then(() => Promise.reject(new Error(`no answer within ${SHUTDOWN_EXPORT_MS} ms`))),
        ]);
      } catch (err) {
        warnings?.({ otel: `the last spans were not exported: ${err instanceof Error ? err.message : String(err)}` }, 'tracing');
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}

/** A request that already names its trace (set by its caller) is left as it is: not re-parented, not given a second `traceparent`. */
function carriesTraceparent(request: { headers: string | (string | string[])[] }): boolean {
  const { headers } = request;
  if (typeof headers === 'string') return /(^|\r\n)traceparent:/i.test(headers);
  for (let i = 0; i < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'traceparent') return true;
  return false;
}

/**
 * Probes and scrapes (a span each every few seconds would drown the traces that matter), and the
 * SSE streams (their request never ends while the client listens, nor does its span).
 */
const IGNORED_PATHS = new Set(['/health', '/ready', '/metrics', '/metrics/prometheus', '/v1/stream']);
const IGNORED_PATTERNS = [/^\/v1\/bus\/subscriptions\/[^/]+\/messages$/];

function isIgnoredPath(url: string): boolean {
  const path = pathOf(url);
  return IGNORED_PATHS.has(path) || IGNORED_PATTERNS.some((p) => p.test(path));
}

function pathOf(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? url : url.slice(0, at);
}
