export * from './clock.js';
export * from './ids.js';
export * from './errors.js';
export * from './schemas/action.js';
export * from './schemas/outcome.js';
export * from './schemas/rules.js';
export * from './schemas/quotas.js';
export * from './schemas/auth.js';
