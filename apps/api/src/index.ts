export * from './app.js';
export * from './readiness.js';
export { operationsRoutes } from './routes/operations.js';
export { installErrorHandling } from './plugins/errors.js';
