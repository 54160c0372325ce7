import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { StateKey, StateStore } from '@sluice/state';

export interface SigningKey {
  id: string;
  /** Raw key bytes. */
  secret: Buffer;
}

/** What a signature covers: the approval's scope and id, and the link's expiry (unix seconds). */
export interface SignedApproval {
  namespace: string;
  tenant: string;
  id: string;
  expiresAtSec: number;
}

/** The reference's signing input: length-prefixed fields (byte lengths), newline-separated, no trailing newline. */
function signingInput(a: SignedApproval): string {
  const field = (v: string) => `${Buffer.byteLength(v, 'utf8')}:${v}`;
  return `${field(a.namespace)}\n${field(a.tenant)}\n${field(a.id)}\n${a.expiresAtSec}`;
}

function hmacHex(key: SigningKey, a: SignedApproval): string {
  return createHmac('sha256', key.secret).update(signingInput(a)).digest('hex');
}

/**
 * Signs approval links and checks them. The first key signs; every key verifies, so a rotated-out
 * key keeps its links working until it is removed from the configuration. The verb is not
 * signed: one signature serves the approve and the reject link (as in the reference).
 */
export class ApprovalSigner {
  constructor(private readonly keys: readonly SigningKey[]) {
    if (keys.length === 0) throw new Error('an approval signer needs at least one key');
  }

  sign(a: SignedApproval): { sig: string; kid: string } {
    const key = this.keys[0] as SigningKey;
    return { sig: hmacHex(key, a), kid: key.id };
  }

  /** With a kid, only that key is tried (an unknown kid fails); without, every key. Constant-time comparison. */
  verify(a: SignedApproval, sig: string, kid: string | undefined): boolean {
    const given = Buffer.from(sig, 'hex');
    if (given.length !== 32 || given.toString('hex') !== sig.toLowerCase()) return false;
    const candidates = kid === undefined ? this.keys : this.keys.filter((k) => k.id === kid);
    return candidates.some((key) => timingSafeEqual(Buffer.from(hmacHex(key, a), 'hex'), given));
  }
}

const SHARED_KEY: StateKey = { kind: 'approval-key', namespace: '_', tenant: '_', id: 'k0' };

/**
 * The configured keys, or else one random key generated once and kept in the state store, so
 * every replica signs and verifies with the same one (kid `k0`).
 */
export async function loadSigningKeys(configured: readonly { id: string; secret: string }[], state: StateStore): Promise<SigningKey[]> {
  if (configured.length > 0) return configured.map((k) => ({ id: k.id, secret: Buffer.from(k.secret, 'hex') }));
  await state.setIfAbsent(SHARED_KEY, randomBytes(32).toString('hex'));
  const stored = await state.get(SHARED_KEY);
  if (!stored) throw new Error('the shared approval key could not be read back from the state store');
  return [{ id: SHARED_KEY.id, secret: Buffer.from(stored, 'hex') }];
}
