import type { SluiceConfig } from '@sluice/config';
import { createRuntime, type Runtime, type RuntimeOptions } from '@sluice/gateway';
import { Readiness } from '@sluice/http';
import type { FastifyInstance } from 'fastify';
import { buildWorkerHealthServer } from './health-server.js';
import { startConsumers } from './start-worker.js';

/** A worker process, composed and consuming; its health server is built but not listening yet. */
export interface WorkerProcess {
  runtime: Runtime;
  readiness: Readiness;
  health: FastifyInstance;
  /** The job kinds consumed. */
  kinds: string[];
  /** Drains: /ready answers 503, running jobs finish, the runtime closes, then the health server. */
  close(): Promise<void>;
}

/** The worker's composition root: one runtime from the shared builder, its consumers and the health server. */
export async function composeWorker(config: SluiceConfig, opts: RuntimeOptions): Promise<WorkerProcess> {
  const runtime = await createRuntime(config, opts);
  const readiness = new Readiness(() => runtime.state.ping());
  try {
    const health = await buildWorkerHealthServer(runtime, readiness);
    const kinds = await startConsumers(runtime);
    return {
      runtime,
      readiness,
      health,
      kinds,
      async close() {
        readiness.startDraining();
        await runtime.close();
        await health.close();
      },
    };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}
