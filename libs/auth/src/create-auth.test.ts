import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { MemoryStateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { poll } from '../../../test/support/poll.js';
import { capturingLogger, credentialsYaml, JWT_SECRET, scryptPhc, tempCredentialsFile } from '../test/auth-fixtures.js';
import { hashApiKey } from './api-key-hash.js';
import { createAuth } from './create-auth.js';
import { CredentialsError } from './credentials.js';
import { encryptValue } from './encrypted-values.js';

const deps = () => ({ state: new MemoryStateStore(), logger: capturingLogger() });
const login_throttle = { max_attempts: 10, window_seconds: 300 };

describe('createAuth', () => {
  it('returns null when auth is disabled', () => {
    expect(createAuth({ enabled: false, file: null, watch: true, login_throttle }, deps())).toBeNull();
  });

  it('refuses to start without a usable file', () => {
    expect(() => createAuth({ enabled: true, file: null, watch: false, login_throttle }, deps())).toThrow(CredentialsError);
    const broken = tempCredentialsFile('settings: {}\n');
    expect(() => createAuth({ enabled: true, file: broken, watch: false, login_throttle }, deps())).toThrow(/settings\.jwt_secret: required/);
  });

  it('wires store, tokens and revocation; ENC values use env.SLUICE_AUTH_KEY', async () => {
    const key = randomBytes(32);
    const users = `  - { username: ops, password_hash: '${encryptValue(scryptPhc('pw'), key)}', role: operator }\n`;
    const file = tempCredentialsFile(credentialsYaml({ settings: `  jwt_secret: '${encryptValue(JWT_SECRET, key)}'\n`, users }));
    const auth = createAuth({ enabled: true, file, watch: false, login_throttle }, { ...deps(), env: { SLUICE_AUTH_KEY: key.toString('base64') } });
    try {
      expect(auth?.store.jwtSecret).toBe(JWT_SECRET);
      const { token } = (await auth?.authenticator.login('ops', 'pw')) ?? { token: '' };
      const caller = await auth?.authenticator.authenticate({ authorization: `Bearer ${token}` });
      expect(caller).toMatchObject({ id: 'ops', role: 'operator', method: 'jwt' });
    } finally {
      auth?.close();
    }
  });

  it('an API key added to the file works within 2 s', async () => {
    const file = tempCredentialsFile(credentialsYaml());
    const auth = createAuth({ enabled: true, file, watch: true, login_throttle }, deps());
    try {
      const headers = { 'x-api-key': 'fresh-key-0123456789' };
      await expect(auth?.authenticator.authenticate(headers)).rejects.toThrow('invalid API key');
      const started = Date.now();
      writeFileSync(file, credentialsYaml({ api_keys: `  - { name: fresh, key_hash: ${hashApiKey(headers['x-api-key'])}, role: viewer }\n` }));
      const works = () =>
        auth?.authenticator.authenticate(headers).then(
          () => true,
          () => false,
        ) ?? false;
      await poll('the added key to work', works, { timeoutMs: 2000, intervalMs: 25 });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      auth?.close();
    }
  });
});
