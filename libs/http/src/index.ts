export * from './charset.js';
export * from './error-handler.js';
export * from './json-schema.js';
export * from './operations-routes.js';
export * from './readiness.js';
export * from './route-access.js';
export * from './zod-validation.js';
export * from './json-depth.js';
