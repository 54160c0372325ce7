import type { Logger } from '@sluice/telemetry';
import { UsageError } from './args.js';

/**
 * The memory backend keeps authoritative state in one process: a second replica or a separate
 * worker would silently split it. Refuse the shapes that cannot work; warn loudly where a
 * platform suggests several replicas.
 */
export function checkDeployment(opts: { command: 'serve' | 'worker'; backend: string; noWorker: boolean; logger: Logger; env?: NodeJS.ProcessEnv }): void {
  if (opts.backend !== 'memory') return;
  if (opts.command === 'worker') {
    throw new UsageError('refusing to start: `sluice worker` needs state.backend: redis (the memory backend lives inside one `sluice serve` process)');
  }
  if (opts.noWorker) {
    throw new UsageError('refusing to start: --no-worker needs state.backend: redis (with the memory backend no other process could run background jobs)');
  }
  const env = opts.env ?? process.env;
  if (env.KUBERNETES_SERVICE_HOST) {
    opts.logger.warn(
      'state.backend is memory on Kubernetes: every replica keeps its own state, so dedup, throttles, quotas and jobs are NOT shared. Run exactly one replica, or use state.backend: redis.',
    );
  }
}
