import { setTimeout as delay } from 'node:timers/promises';
import type { SluiceConfig } from '@sluice/config';
import { createRuntime, type Runtime, type RuntimeOptions } from '@sluice/gateway';
import { Readiness } from '@sluice/http';
import type { FastifyInstance } from 'fastify';
import type { Tracing } from '@sluice/telemetry';
import { buildApiApp } from './app.js';

/** An API process, composed: the runtime, its readiness and the HTTP app (not listening yet). */
export interface ApiProcess {
  runtime: Runtime;
  readiness: Readiness;
  app: FastifyInstance;
  /**
   * Drains: /ready answers 503 at once; for `drainDelayMs` the app keeps serving (each response
   * closing its connection) while load balancers notice; then it stops listening, closes idle
   * connections, finishes in-flight requests, and closes the runtime.
   */
  close(opts?: { drainDelayMs?: number }): Promise<void>;
}

/** The API's composition root: one runtime from the shared builder, and the HTTP app over it. */
export async function composeApi(config: SluiceConfig, opts: RuntimeOptions & { tracing?: Tracing | null; checkResponses?: boolean }): Promise<ApiProcess> {
  const { tracing, checkResponses = false, ...runtimeOpts } = opts;
  const runtime = await createRuntime(config, tracing ? { ...runtimeOpts, tracer: tracing.tracer } : runtimeOpts);
  const readiness = new Readiness(() => runtime.state.ping());
  let app: FastifyInstance;
  try {
    app = await buildApiApp({ runtime, readiness, checkResponses, ...(tracing ? { tracingPlugin: tracing.fastifyPlugin } : {}) });
  } catch (err) {
    await runtime.close();
    throw err;
  }
  return {
    runtime,
    readiness,
    app,
    async close({ drainDelayMs = 0 } = {}) {
      readiness.startDraining();
      if (drainDelayMs > 0) await delay(drainDelayMs);
      readiness.startClosing();
      await app.close();
      await runtime.close();
    },
  };
}
