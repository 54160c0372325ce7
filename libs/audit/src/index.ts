export * from './audit-store.js';
export * from './state-audit-store.js';
export * as auditKeys from './keys.js';
export * from './analytics/index.js';
export * from './coverage/index.js';
export { decodeCursor, encodeCursor } from './query-cursor.js';
export { verifyChainOf, type ChainSource } from './chain-verifier.js';
export { readChainHead } from './hash-chain.js';
export { isExpired } from './record-codec.js';
