export * from './job-topology.js';
export * from './run-job.js';
export * from './start-worker.js';
export * from './health-server.js';
