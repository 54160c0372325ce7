export * from './client.js';
export * from './errors.js';
export type { StreamEvent } from './event-stream.js';
/** Every path of the API, as openapi-typescript generated it. @public */
export type { paths } from './generated/openapi.js';
