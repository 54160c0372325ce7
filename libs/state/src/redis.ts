// `@sluice/state/redis`: the Redis backend (ioredis, BullMQ). Not in the main entry, so a
// process on the memory backend never loads them.
export * from './redis/redis-state-store.js';
export * from './bullmq/bullmq-scheduler.js';
