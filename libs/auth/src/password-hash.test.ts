import { describe, expect, it } from 'vitest';
import { argon2Phc, scryptPhc } from '../test/auth-fixtures.js';
import { passwordHashProblem, verifyPassword } from './password-hash.js';

describe('argon2id', () => {
  it('verifies the right password only', async () => {
    const phc = await argon2Phc('correct horse');
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
    expect(passwordHashProblem(phc)).toBeNull();
    expect(await verifyPassword(phc, 'correct horse')).toBe(true);
    expect(await verifyPassword(phc, 'wrong horse')).toBe(false);
  });

  it('rejects a malformed argon2id string at load and verifies it as false', async () => {
    expect(passwordHashProblem('$argon2id$v=19$garbage')).toMatch(/malformed argon2id/);
    expect(await verifyPassword('$argon2id$v=19$garbage', 'x')).toBe(false);
  });
});

describe('scrypt', () => {
  it('verifies the right password only', async () => {
    const phc = scryptPhc('hunter2');
    expect(phc).toMatch(/^\$scrypt\$ln=4,r=8,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(passwordHashProblem(phc)).toBeNull();
    expect(await verifyPassword(phc, 'hunter2')).toBe(true);
    expect(await verifyPassword(phc, 'hunter3')).toBe(false);
  });

  it('honours the parameters in the string', async () => {
    const phc = scryptPhc('pw', { ln: 5, r: 4, p: 2 });
    expect(await verifyPassword(phc, 'pw')).toBe(true);
    expect(await verifyPassword(phc.replace('ln=5', 'ln=6'), 'pw')).toBe(false);
  });

  it('accepts the passlib "ab64" alphabet (. for +)', async () => {
    // Retry until the encoding has a '+', so the test exercises the substitution.
    let phc = scryptPhc('pw');
    while (!phc.includes('+')) phc = scryptPhc('pw');
    expect(await verifyPassword(phc.replace(/\+/g, '.'), 'pw')).toBe(true);
  });

  it.each([
    ['$scrypt$ln=4,r=8$c2FsdA$aGFzaA', /malformed scrypt/],
    ['$scrypt$ln=0,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA', /ln must be between/],
    ['$scrypt$ln=21,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA', /ln must be between/],
    ['$scrypt$ln=20,r=64,p=16$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA', /more than 1 GiB/],
    ['$scrypt$ln=4,r=8,p=1$c2FsdA$aGFzaA', /shorter than 16 bytes/],
  ])('refuses %s', (phc, problem) => {
    expect(passwordHashProblem(phc)).toMatch(problem);
  });
});

describe('other formats', () => {
  it.each(['plaintext', '$2b$10$abcdefghijklmnopqrstuv', '$argon2i$v=19$m=16,t=2,p=1$c2FsdA$aGFzaA'])('refuses %s', async (phc) => {
    expect(passwordHashProblem(phc)).toMatch(/unsupported password hash/);
    expect(await verifyPassword(phc, 'plaintext')).toBe(false);
  });
});
