export * from './effective-ttl.js';
export * from './retention-index.js';
export * from './retention-reaper.js';
export * from './retention-repository.js';
export * from './retention-schedule.js';
export * from './retention-source.js';
