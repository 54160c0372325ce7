import type { TestProject } from 'vitest/node';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/**
 * One private redis-server for the whole run; each test isolates itself with a unique key prefix.
 * @public vitest's globalSetup (vitest.config.ts) loads it by path.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startRedisServer();
  project.provide('redisUrl', redis.url);
  process.env.SLUICE_TEST_REDIS_URL = redis.url;
  return () => redis.stop();
}
