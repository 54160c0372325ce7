import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type RunningPostgres } from '../support/postgres-server.js';
import { freePort } from '../support/free-port.js';
import { testRedisUrl, uniquePrefix } from '../support/redis-url.js';
import { runSluice, spawnSluice } from '../support/sluice-process.js';
import { MIGRATIONS } from '@sluice/audit-postgres';

// `sluice migrate` as a user runs it: real processes, a real PostgreSQL, the config file.
describe('sluice migrate', () => {
  let server: RunningPostgres;
  let dir: string;
  beforeAll(async () => {
    server = await startPostgresServer();
    dir = mkdtempSync(join(tmpdir(), 'sluice-migrate-'));
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const configFor = (name: string, postgres: Record<string, unknown>) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, `audit:\n  postgres: ${JSON.stringify(postgres)}\n`);
    return file;
  };
  const rowsOf = async (url: string, sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };

  it('two processes at once: both succeed, each step is applied by exactly one of them', async () => {
    const url = await server.createDatabase('race');
    const config = configFor('race', { url, schema: 'trail', partitions_ahead_days: 2 });
    const [a, b] = await Promise.all([runSluice(['migrate', '--config', config]), runSluice(['migrate', '--config', config])]);
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, '', '']);
    const results = [JSON.parse(a.stdout), JSON.parse(b.stdout)] as { applied: number[]; to: number; partitions_created: string[]; schema: string }[];
    expect(results.flatMap((r) => r.applied)).toEqual(MIGRATIONS.map((m) => m.version));
    const latest = Math.max(...MIGRATIONS.map((m) => m.version));
    expect(results.map((r) => r.to)).toEqual([latest, latest]);
    // Yesterday, today and two days ahead, created once between them.
    expect(results.flatMap((r) => r.partitions_created)).toHaveLength(4);
    expect(await rowsOf(url, 'SELECT version FROM trail.schema_migrations ORDER BY version')).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    const parts = await rowsOf(url, "SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'trail.audit_records'::regclass");
    expect(parts).toEqual([{ n: 4 }]);
  });

  it('reads the URL from the env variable url_env names, or decrypts an ENC[...] url', async () => {
    const url = await server.createDatabase('secrets');
    const fromEnv = await runSluice(['migrate', '--config', configFor('env', { url_env: 'AUDIT_DB_URL' })], { env: { AUDIT_DB_URL: url } });
    expect(fromEnv.code).toBe(0);
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ schema: 'sluice_audit', applied: MIGRATIONS.map((m) => m.version) });

    const key = randomBytes(32).toString('hex');
    const encrypted = await runSluice(['encrypt'], { env: { SLUICE_AUTH_KEY: key }, stdin: url });
    const enc = await runSluice(['migrate', '--config', configFor('enc', { url: encrypted.stdout.trim(), schema: 'other' })], {
      env: { SLUICE_AUTH_KEY: key },
    });
    expect(enc.code).toBe(0);
    expect(JSON.parse(enc.stdout)).toMatchObject({ schema: 'other', applied: MIGRATIONS.map((m) => m.version) });
  });

  it('exits 2 naming what is missing or wrong, and 1 on a schema newer than this release', async () => {
    const none = await runSluice(['migrate', '--config', configFor('none', {})]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/audit\.postgres\.url/);
    const unset = await runSluice(['migrate', '--config', configFor('unset', { url_env: 'NOT_SET_ANYWHERE' })], { env: { NOT_SET_ANYWHERE: '' } });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/NOT_SET_ANYWHERE/);
    const badSchema = await runSluice(['migrate', '--config', configFor('bad', { url: 'postgres://x@127.0.0.1/x', schema: 'Robert"); DROP' })]);
    expect(badSchema.code).toBe(2);
    expect(badSchema.stderr).toMatch(/schema/);

    const url = await server.createDatabase('newer');
    const config = configFor('newer', { url });
    expect((await runSluice(['migrate', '--config', config])).code).toBe(0);
    await rowsOf(url, "INSERT INTO sluice_audit.schema_migrations (version, name) VALUES (99, 'future')");
    const refused = await runSluice(['migrate', '--config', config]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/version 99, newer than this release knows/);
  });

  it('an API replica started before any worker migrated answers audit reads 503 NOT_READY, then serves them once migrated', async () => {
    const url = await server.createDatabase('unmigrated');
    const file = join(dir, 'api.yaml');
    writeFileSync(
      file,
      `state: { backend: redis, url: "${testRedisUrl()}", prefix: "${uniquePrefix()}" }\naudit: { backend: postgres, postgres: { url: "${url}" } }\n`,
    );
    const port = await freePort();
    const api = await spawnSluice(['serve', '--no-worker', '--config', file, '--port', String(port)], { port });
    try {
      const before = await fetch(`${api.url}/v1/audit`);
      expect(before.status).toBe(503);
      expect(await before.json()).toMatchObject({ code: 'NOT_READY', error: expect.stringContaining('sluice migrate') });
      expect((await runSluice(['migrate', '--config', file])).code).toBe(0);
      expect((await fetch(`${api.url}/v1/audit`)).status).toBe(200);
    } finally {
      api.kill();
      await api.exited;
    }
  });
});
