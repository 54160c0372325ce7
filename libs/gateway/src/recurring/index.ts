export * from './recurring-service.js';
export * from './recurring-input.js';
export * from './recurring-keys.js';
export * from './cron-schedule.js';
export * from './occurrence.js';
export * from './occurrence-action.js';
