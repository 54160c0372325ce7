import { systemClock, type Clock } from '@sluice/core';
import { GLOBAL_SCOPE, type StateKey, type StateStore } from '@sluice/state';
import { CLOCK_TOLERANCE_SECONDS } from './token-service.js';

const KIND = 'jwt-revoked';
const MIN_TTL_MS = 1000;
// Verification accepts a token this long past its exp, so the entry must outlive exp by as much.
const LEEWAY_MS = CLOCK_TOLERANCE_SECONDS * 1000;

/**
 * Revoked JWT ids, in the shared StateStore so a logout on one replica is honoured by all. An
 * entry lives until the token would have expired anyway (plus the verification leeway), then
 * disappears by TTL.
 */
export class RevocationList {
  constructor(
    private readonly state: StateStore,
    private readonly clock: Clock = systemClock,
  ) {}

  async revoke(jti: string, expiresAtMs: number): Promise<void> {
    const ttlMs = Math.max(MIN_TTL_MS, Math.ceil(expiresAtMs - this.clock.now()) + LEEWAY_MS);
    await this.state.set(keyOf(jti), '1', { ttlMs });
  }

  async isRevoked(jti: string): Promise<boolean> {
    return (await this.state.get(keyOf(jti))) !== null;
  }
}

function keyOf(jti: string): StateKey {
  return { kind: KIND, ...GLOBAL_SCOPE, id: jti };
}
