import type { SluiceConfig } from '@sluice/config';
import { createRuntime, type Runtime, type RuntimeOptions } from '@sluice/gateway';
import { Readiness } from '@sluice/http';
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from './app.js';

/** An API process, composed: the runtime, its readiness and the HTTP app (not listening yet). */
export interface ApiProcess {
  runtime: Runtime;
  readiness: Readiness;
  app: FastifyInstance;
  /** Drains: /ready answers 503, the app finishes in-flight requests and closes, then the runtime. */
  close(): Promise<void>;
}

/** The API's composition root: one runtime from the shared builder, and the HTTP app over it. */
export async function composeApi(config: SluiceConfig, opts: RuntimeOptions): Promise<ApiProcess> {
  const runtime = await createRuntime(config, opts);
  const readiness = new Readiness(() => runtime.state.ping());
  let app: FastifyInstance;
  try {
    app = await buildApiApp({ runtime, readiness });
  } catch (err) {
    await runtime.close();
    throw err;
  }
  return {
    runtime,
    readiness,
    app,
    async close() {
      readiness.startDraining();
      await app.close();
      await runtime.close();
    },
  };
}
