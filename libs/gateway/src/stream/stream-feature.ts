import { systemClock } from '@sluice/core';
import type { Feature, FeatureContext } from '../feature.js';
import { StreamService } from './stream-service.js';

export interface StreamFeature extends Feature {
  /** Null while `stream.enabled` is off. */
  readonly stream: StreamService | null;
}

/** The SSE stream's events: in every process (workers publish theirs in cluster scope), clients on API replicas. */
export async function streamFeature(ctx: FeatureContext): Promise<StreamFeature> {
  const cfg = ctx.config.stream;
  if (!cfg.enabled) return { name: 'stream', stream: null };
  const stream = new StreamService({
    state: ctx.state,
    // Leases and keep-alives are about live processes and sockets: real time, even when a test drives the gateway's clock.
    clock: systemClock,
    logger: ctx.logger,
    bus: ctx.events,
    // One process holds everything in memory mode: there is no cluster to fan out to.
    scope: ctx.config.state.backend === 'memory' ? 'local' : cfg.scope,
    maxConnectionsPerBucket: ctx.config.server.max_sse_connections_per_tenant,
    maxQueued: cfg.max_queued_events,
    keepAliveMs: cfg.keep_alive_seconds * 1000,
    leaseTtlMs: cfg.lease_ttl_seconds * 1000,
    checkIntervalMs: 1000,
    onConnections: (count) => ctx.metrics.streamConnections.set(count),
  });
  await stream.start();
  return { name: 'stream', stream, close: () => stream.close() };
}
