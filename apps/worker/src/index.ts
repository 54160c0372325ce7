export * from './compose.js';
export * from './health-server.js';
export * from './run-job.js';
export * from './start-worker.js';
