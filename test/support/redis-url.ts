import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';

/** URL of the run's private redis-server (started by global-redis.ts). */
export function testRedisUrl(): string {
  const url = inject('redisUrl');
  if (!url) throw new Error('the test redis-server is not running (global setup missing)');
  return url;
}

/** Seed nodes (`host:port`) of the run's private Redis Cluster (started by global-redis.ts). */
export function testRedisClusterNodes(): string[] {
  const nodes = inject('redisClusterNodes');
  if (!nodes || nodes.length === 0) throw new Error('the test Redis Cluster is not running (global setup missing)');
  return nodes;
}

/** A key prefix no other test uses, so suites can share the server without seeing each other. */
export function uniquePrefix(): string {
  return `sluice-test-${randomUUID().slice(0, 8)}`;
}
