export * from './client.js';
export * from './errors.js';
export { SluiceStreamClosed, type StreamEvent } from './event-stream.js';
/** Every path of the API, as openapi-typescript generated it. @public */
export type { paths } from './generated/openapi.js';
