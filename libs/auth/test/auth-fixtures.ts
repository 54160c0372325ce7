/** Builders shared by the auth unit tests (kept out of src so they never ship). */
import { randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hash as argon2Hash } from '@node-rs/argon2';
import type { AuthLogger } from '../src/auth-logger.js';

export const JWT_SECRET = 'test-secret-that-is-long-enough-0123456789';

/** `$scrypt$ln=..,r=..,p=..$salt$hash` with unpadded base64; small cost so tests stay fast. */
export function scryptPhc(password: string, opts: { ln?: number; r?: number; p?: number } = {}): string {
  const ln = opts.ln ?? 4;
  const r = opts.r ?? 8;
  const p = opts.p ?? 1;
  const salt = randomBytes(16);
  const derived = scryptSync(password, salt, 32, { N: 2 ** ln, r, p });
  const b64 = (b: Buffer): string => b.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(derived)}`;
}

/** A cheap argon2id PHC string (`$argon2id$v=19$m=..,t=..,p=..$salt$hash`). */
export function argon2Phc(password: string): Promise<string> {
  return argon2Hash(password, { memoryCost: 1024, timeCost: 1, parallelism: 1 });
}

/** Writes `text` to a fresh temp directory; returns the file path. */
export function tempCredentialsFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-auth-')), 'credentials.yaml');
  writeFileSync(file, text);
  return file;
}

export interface CapturedLine {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  message: string;
}

export function capturingLogger(): AuthLogger & { lines: CapturedLine[] } {
  const lines: CapturedLine[] = [];
  return {
    lines,
    info: (fields, message) => lines.push({ level: 'info', fields, message }),
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
  };
}

/** A credentials YAML document with the test secret and the given sections. */
export function credentialsYaml(sections: { users?: string; api_keys?: string; settings?: string } = {}): string {
  const settings = sections.settings ?? `  jwt_secret: ${JWT_SECRET}\n`;
  return `settings:\n${settings}users:\n${sections.users ?? '  []\n'}api_keys:\n${sections.api_keys ?? '  []\n'}`;
}
