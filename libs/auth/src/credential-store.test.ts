import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { poll } from '../../../test/support/poll.js';
import { capturingLogger, credentialsYaml, tempCredentialsFile } from '../test/auth-fixtures.js';
import { hashApiKey } from './api-key-hash.js';
import { CredentialStore, type CredentialStoreOptions } from './credential-store.js';
import { CredentialsError } from './credentials.js';

const keyEntry = (name: string, rawKey: string) => `  - { name: ${name}, key_hash: ${hashApiKey(rawKey)}, role: operator }\n`;
const legacyEntry = (rawKey: string) => `  - { key: ${rawKey}, role: operator, tenant: acme }\n`;

const stores: CredentialStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function open(opts: Partial<CredentialStoreOptions> & { file: string }) {
  const logger = capturingLogger();
  const store = new CredentialStore({ watch: true, logger, ...opts });
  stores.push(store);
  return { store, logger };
}

describe('CredentialStore start-up', () => {
  it('loads the file and logs counts, never values', () => {
    const file = tempCredentialsFile(credentialsYaml({ api_keys: keyEntry('ci', 'k1') + legacyEntry('raw-legacy-key-0001') }));
    const { store, logger } = open({ file, watch: false });
    expect(store.current.apiKeys.size).toBe(2);
    expect(logger.lines.find((l) => l.message === 'credentials loaded')?.fields).toEqual({ file, users: 0, api_keys: 2 });
    expect(JSON.stringify(logger.lines)).not.toContain('raw-legacy-key-0001');
  });

  it('throws a clear error on a broken or missing file', () => {
    const broken = tempCredentialsFile(credentialsYaml({ api_keys: '  - { name: a, key_hash: nope, role: admin }\n' }));
    expect(() => open({ file: broken })).toThrow(CredentialsError);
    expect(() => open({ file: broken })).toThrow(/api_keys\.0\.key_hash/);
    expect(() => open({ file: join(tmpdir(), 'no-such-dir-sluice', 'creds.yaml') })).toThrow(/cannot read credentials file .*ENOENT/);
  });
});

describe('CredentialStore reload', () => {
  it('picks up an added key within 2 s when watching', async () => {
    const file = tempCredentialsFile(credentialsYaml({ api_keys: keyEntry('one', 'k1') }));
    const { store, logger } = open({ file });
    writeFileSync(file, credentialsYaml({ api_keys: keyEntry('one', 'k1') + keyEntry('two', 'k2') }));
    await poll('key k2', () => store.current.apiKeys.has(hashApiKey('k2')), { timeoutMs: 2000, intervalMs: 25 });
    expect(logger.lines.some((l) => l.message === 'credentials reloaded' && l.fields.api_keys === 2)).toBe(true);
  });

  it('follows a Kubernetes ConfigMap style symlink swap', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cm-'));
    const writeVersion = (version: string, text: string) => {
      mkdirSync(join(dir, version));
      writeFileSync(join(dir, version, 'credentials.yaml'), text);
    };
    writeVersion('..v1', credentialsYaml({ api_keys: keyEntry('one', 'k1') }));
    symlinkSync('..v1', join(dir, '..data'));
    symlinkSync(join('..data', 'credentials.yaml'), join(dir, 'credentials.yaml'));
    const { store } = open({ file: join(dir, 'credentials.yaml') });

    writeVersion('..v2', credentialsYaml({ api_keys: keyEntry('two', 'k2') }));
    symlinkSync('..v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    await poll('key k2', () => store.current.apiKeys.has(hashApiKey('k2')), { timeoutMs: 2000, intervalMs: 25 });
    expect(store.current.apiKeys.has(hashApiKey('k1'))).toBe(false);
  });

  it('keeps the last good credentials when a reload is broken, and logs why', async () => {
    const file = tempCredentialsFile(credentialsYaml({ api_keys: keyEntry('one', 'k1') }));
    const { store, logger } = open({ file });
    writeFileSync(file, credentialsYaml({ api_keys: '  - { name: two, key_hash: zz, role: admin }\n' }));
    const failed = () => logger.lines.some((l) => l.level === 'warn' && l.message.startsWith('credentials reload failed'));
    await poll('the reload failure warning', failed, { timeoutMs: 2000, intervalMs: 25 });
    expect(store.current.apiKeys.has(hashApiKey('k1'))).toBe(true);
    const warning = logger.lines.find((l) => l.message.startsWith('credentials reload failed'));
    expect(warning?.fields.reason).toMatch(/api_keys\.0\.key_hash: must be 64 hex/);

    // The same broken content is reported once, not at every poll.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(logger.lines.filter((l) => l.message.startsWith('credentials reload failed'))).toHaveLength(1);

    writeFileSync(file, credentialsYaml({ api_keys: keyEntry('two', 'k2') }));
    await poll('key k2', () => store.current.apiKeys.has(hashApiKey('k2')), { timeoutMs: 2000, intervalMs: 25 });
  });

  it('keeps the start-up JWT secret when a reload changes it', () => {
    const file = tempCredentialsFile(credentialsYaml());
    const { store, logger } = open({ file, watch: false });
    const original = store.jwtSecret;
    writeFileSync(file, credentialsYaml({ settings: `  jwt_secret: ${'n'.repeat(40)}\n  jwt_expiry_seconds: 120\n`, api_keys: keyEntry('x', 'kx') }));
    expect(store.reload()).toBe('reloaded');
    expect(store.current.jwtSecret).toBe(original);
    expect(store.current.jwtExpirySeconds).toBe(120);
    expect(store.current.apiKeys.size).toBe(1);
    const warning = logger.lines.find((l) => l.message.includes('jwt_secret changed'));
    expect(warning?.level).toBe('warn');
    expect(JSON.stringify(logger.lines)).not.toContain('n'.repeat(40));
  });

  it('reload() reports unchanged content and a vanished file without throwing', () => {
    const file = tempCredentialsFile(credentialsYaml());
    const { store, logger } = open({ file, watch: false });
    expect(store.reload()).toBe('unchanged');
    renameSync(file, `${file}.gone`);
    expect(store.reload()).toBe('failed');
    expect(logger.lines.at(-1)?.fields.reason).toMatch(/ENOENT/);
  });

  it('does not reload on its own when watch is off', async () => {
    const file = tempCredentialsFile(credentialsYaml());
    const { store } = open({ file, watch: false, pollIntervalMs: 20 });
    writeFileSync(file, credentialsYaml({ api_keys: keyEntry('x', 'kx') }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(store.current.apiKeys.size).toBe(0);
  });
});
