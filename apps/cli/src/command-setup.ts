/** What `serve` and `worker` do before loading the gateway: their configuration, then tracing. Loaded by those commands only. */
export { commandConfig } from './command-config.js';
export { startCommandTracing } from './command-tracing.js';
