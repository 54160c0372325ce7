export * from './app.js';
export * from './compose.js';
