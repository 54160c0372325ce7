export * from './state-store.js';
export * from './scheduler.js';
export { latestCronTimeAtOrBefore, nextCronTime } from './scheduler-rules.js';
export * from './keys.js';
export * from './spread-scopes.js';
export * from './log-ids.js';
export * from './create-state-store.js';
export type { RedisTarget } from './redis/connection.js';
export * from './create-scheduler.js';
export * from './memory/memory-state-store.js';
export * from './memory/in-process-scheduler.js';
// The Redis backend (ioredis, BullMQ) is loaded on demand; its classes are in `@sluice/state/redis`.
export * from './lazy-redis.js';
export * from './records/cas-retry.js';
export * from './records/generation-sync.js';
export * from './records/record-keys.js';
export * from './records/record-repository.js';
