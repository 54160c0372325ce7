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

/** A signature as links carry it: HMAC-SHA256 in lowercase hex. */
const ISSUED_SIG = /^[0-9a-f]{64}$/;

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

  /**
   * The id of the key that made `sig`, or null. With a kid, only that key is tried (an unknown kid
   * fails); without, every key. Only the form links are issued in (lowercase hex) is accepted, so
   * a link changed in any way fails. Constant-time comparison.
   */
  verify(a: SignedApproval, sig: string, kid: string | undefined): string | null {
    if (!ISSUED_SIG.test(sig)) return null;
    const given = Buffer.from(sig, 'hex');
    const candidates = kid === undefined ? this.keys : this.keys.filter((k) => k.id === kid);
    return candidates.find((key) => timingSafeEqual(Buffer.from(hmacHex(key, a), 'hex'), given))?.id ?? null;
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
