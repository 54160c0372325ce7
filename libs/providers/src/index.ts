export * from './provider.js';
export * from './spec.js';
export * from './noop-provider.js';
export * from './log-provider.js';
export * from './webhook-provider.js';
export * from './lazy-undici.js';
export { readBounded } from './response-body.js';
export * from './registry.js';
export * from './executor.js';
