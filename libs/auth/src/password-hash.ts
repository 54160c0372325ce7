import { scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { parseOptions as parseArgon2Options, verify as argon2Verify } from '@node-rs/argon2';

/**
 * Password hashes in the credentials file are PHC strings:
 *   argon2id  `$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>`
 *   scrypt    `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>`   (unpadded base64)
 * Both are checked at load time so a typo fails the file, not the first login.
 */

const SCRYPT_RE = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/.]+)\$([A-Za-z0-9+/.]+)$/;

// Bounds keep one login from eating the machine: N ≤ 2^20 and 128·N·r·p ≤ 1 GiB.
const SCRYPT_MAX_LN = 20;
const SCRYPT_MAX_MEMORY = 1024 * 1024 * 1024;

interface ScryptHash {
  cost: number;
  blockSize: number;
  parallelization: number;
  salt: Buffer;
  hash: Buffer;
}

/** Null when the string is an accepted hash; otherwise why not (no part of the hash is echoed). */
export function passwordHashProblem(phc: string): string | null {
  if (phc.startsWith('$argon2id$')) {
    try {
      parseArgon2Options(phc);
      return null;
    } catch {
      return 'malformed argon2id hash (expected $argon2id$v=19$m=..,t=..,p=..$salt$hash)';
    }
  }
  if (phc.startsWith('$scrypt$')) {
    const parsed = parseScrypt(phc);
    return typeof parsed === 'string' ? parsed : null;
  }
  return 'unsupported password hash (expected an argon2id or scrypt PHC string)';
}

/** True when the password matches. A malformed hash verifies as false. */
export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  if (phc.startsWith('$argon2id$')) {
    try {
      return await argon2Verify(phc, password);
    } catch {
      return false;
    }
  }
  const parsed = parseScrypt(phc);
  if (typeof parsed === 'string') return false;
  const derived = await scryptAsync(password, parsed.salt, parsed.hash.length, {
    N: parsed.cost,
    r: parsed.blockSize,
    p: parsed.parallelization,
    maxmem: 128 * parsed.cost * parsed.blockSize * parsed.parallelization + 1024 * 1024,
  });
  return timingSafeEqual(derived, parsed.hash);
}

function parseScrypt(phc: string): ScryptHash | string {
  const m = SCRYPT_RE.exec(phc);
  if (!m) return 'malformed scrypt hash (expected $scrypt$ln=<log2 N>,r=<r>,p=<p>$salt$hash)';
  const ln = Number(m[1]);
  const blockSize = Number(m[2]);
  const parallelization = Number(m[3]);
  if (ln < 1 || ln > SCRYPT_MAX_LN) return `scrypt ln must be between 1 and ${SCRYPT_MAX_LN}`;
  if (blockSize < 1 || parallelization < 1) return 'scrypt r and p must be at least 1';
  const cost = 2 ** ln;
  if (128 * cost * blockSize * parallelization > SCRYPT_MAX_MEMORY) return 'scrypt parameters need more than 1 GiB of memory';
  const salt = decodeB64(m[4] ?? '');
  const hash = decodeB64(m[5] ?? '');
  if (salt.length === 0 || hash.length < 16) return 'scrypt salt is empty or hash is shorter than 16 bytes';
  return { cost, blockSize, parallelization, salt, hash };
}

// PHC uses standard base64 without padding; passlib writes `.` for `+` ("ab64"), accept both.
function decodeB64(text: string): Buffer {
  return Buffer.from(text.replace(/\./g, '+'), 'base64');
}

function scryptAsync(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}
