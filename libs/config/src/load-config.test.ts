import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { loadConfig } from './load-config.js';

function tempFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-cfg-')), 'sluice.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadConfig', () => {
  it('gives the documented defaults with no file', () => {
    const { config } = loadConfig({ env: {} });
    expect(config.server.port).toBe(8080);
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.state.backend).toBe('memory');
    expect(config.providers).toEqual([]);
    expect(config.executor.max_retries).toBe(3);
  });

  it('keeps the audit trail in the state backend by default; postgres needs its URL, and refuses other backends', () => {
    expect(loadConfig({ env: {} }).config.audit.backend).toBe('state');
    expect(() => loadConfig({ env: { SLUICE_AUDIT__BACKEND: 'postgres' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { SLUICE_AUDIT__BACKEND: 'postgres' } })).toThrow(
      /audit\.postgres\.url.*needs audit\.postgres\.url or audit\.postgres\.url_env/,
    );
    expect(() => loadConfig({ env: { SLUICE_AUDIT__BACKEND: 'clickhouse' } })).toThrow(/audit\.backend/);
    const viaEnv = loadConfig({ env: { SLUICE_AUDIT__BACKEND: 'postgres', SLUICE_AUDIT__POSTGRES__URL_ENV: 'AUDIT_DB' } }).config.audit;
    expect(viaEnv).toMatchObject({ backend: 'postgres', postgres: { url_env: 'AUDIT_DB', schema: 'sluice_audit', pool_size: 10 } });
  });

  it('takes a Redis Cluster or a Sentinel set (not both), with the nodes as host:port and a list from the environment', () => {
    const env = { SLUICE_STATE__BACKEND: 'redis', SLUICE_STATE__CLUSTER__NODES: '[redis-0:6379, redis-1:6379, "10.0.0.3:7000"]' };
    expect(loadConfig({ env }).config.state.cluster).toEqual({ nodes: ['redis-0:6379', 'redis-1:6379', '10.0.0.3:7000'] });
    const sentinel = loadConfig({ file: tempFile('state:\n  backend: redis\n  sentinels: [s1:26379, s2:26379]\n  password_env: REDIS_PW\n'), env: {} }).config
      .state;
    expect(sentinel).toMatchObject({ sentinels: ['s1:26379', 's2:26379'], name: 'mymaster', password_env: 'REDIS_PW' });
    expect(() => loadConfig({ file: tempFile('state:\n  cluster: { nodes: [a:1] }\n  sentinels: [s:2]\n'), env: {} })).toThrow(
      /state\.cluster.*exclude each other/,
    );
    expect(() => loadConfig({ file: tempFile('state:\n  cluster: { nodes: [redis://a:1] }\n'), env: {} })).toThrow(/state\.cluster\.nodes\.0.*host:port/);
    expect(() => loadConfig({ file: tempFile('state:\n  cluster: { nodes: [] }\n'), env: {} })).toThrow(/state\.cluster\.nodes/);
    expect(() => loadConfig({ file: tempFile('state:\n  password: x\n  password_env: Y\n'), env: {} })).toThrow(/state\.password.*not both/);
    expect(() => loadConfig({ file: tempFile('state:\n  sentinels: [s:1]\n  sentinel_password: x\n  sentinel_password_env: Y\n'), env: {} })).toThrow(
      /state\.sentinel_password.*not both/,
    );
    expect(() => loadConfig({ file: tempFile('state:\n  sentinel_password: x\n'), env: {} })).toThrow(/state\.sentinel_password.*sentinels only/);
  });

  it('refuses a state.url that is not a redis:// URL with a host, without repeating it (it may hold a password)', () => {
    for (const url of ['redis//:hunter2@redis.internal:6379', 'http://:hunter2@127.0.0.1:1', 'redis://:hunter2@host:notaport', 'redis:///tmp/sock-hunter2']) {
      const refused = (() => {
        try {
          loadConfig({ env: { SLUICE_STATE__URL: url } });
          return null;
        } catch (err) {
          return err;
        }
      })();
      expect(refused, url).toBeInstanceOf(ConfigError);
      expect((refused as Error).message).toMatch(/state\.url: must be a redis:\/\/ or rediss:\/\/ URL/);
      expect((refused as Error).message).not.toContain('hunter2');
    }
    for (const url of ['redis://:pw@redis.internal:6379/2', 'rediss://user:pw@[::1]:6380', 'redis://localhost']) {
      expect(loadConfig({ env: { SLUICE_STATE__URL: url } }).config.state.url).toBe(url);
    }
  });

  it('keeps analytics rollups 400 days, hourly ones 35, and refuses a retention of 0 days', () => {
    const { config } = loadConfig({ env: { SLUICE_AUDIT__ANALYTICS_HOURLY_RETENTION_DAYS: '7' } });
    expect(config.audit).toMatchObject({ analytics_retention_days: 400, analytics_hourly_retention_days: 7 });
    expect(loadConfig({ env: {} }).config.audit.analytics_hourly_retention_days).toBe(35);
    expect(() => loadConfig({ file: tempFile('audit:\n  analytics_retention_days: 0\n'), env: {} })).toThrow(/audit\.analytics_retention_days/);
  });

  it('refuses an audit.unknown_after_seconds shorter than a provider call can take, naming the least', () => {
    // Defaults: 4 attempts of 30 s and 3 backoffs of up to 10 s: 150 s.
    expect(() => loadConfig({ file: tempFile('audit:\n  unknown_after_seconds: 5\n'), env: {} })).toThrow(/audit\.unknown_after_seconds.*at least 150/);
    const short = 'executor:\n  max_retries: 0\n  timeout_seconds: 4\naudit:\n  unknown_after_seconds: 4\n';
    expect(loadConfig({ file: tempFile(short), env: {} }).config.audit.unknown_after_seconds).toBe(4);
  });

  it('accepts an empty file as a valid config', () => {
    const { config } = loadConfig({ file: tempFile(''), env: {} });
    expect(config.state.backend).toBe('memory');
  });

  it('reads YAML and fills defaults beneath given keys', () => {
    const file = tempFile('state:\n  backend: redis\n  url: redis://r:6379\nproviders:\n  - name: hook\n    type: webhook\n    url: http://x/y\n');
    const { config } = loadConfig({ file, env: {} });
    expect(config.state).toMatchObject({ backend: 'redis', url: 'redis://r:6379', prefix: 'sluice' });
    expect(config.providers[0]).toMatchObject({ name: 'hook', headers: {}, max_response_bytes: 1_048_576 });
  });

  it('stops on an unknown key and names it', () => {
    const file = tempFile('server:\n  prot: 9000\n');
    expect(() => loadConfig({ file, env: {} })).toThrow(/server\.prot: unknown key/);
  });

  it('stops on an unknown section and on a bad value, naming both', () => {
    const file = tempFile('servr: {}\nstate:\n  backend: mongo\n');
    try {
      loadConfig({ file, env: {} });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/servr: unknown key/);
      expect((err as Error).message).toMatch(/state\.backend/);
    }
  });

  it('refuses a webhook without url and duplicate provider names', () => {
    const file = tempFile('providers:\n  - {name: a, type: webhook}\n  - {name: a, type: noop}\n');
    expect(() => loadConfig({ file, env: {} })).toThrow(/providers\.0\.url[\s\S]*providers\.1\.name: duplicate/);
  });

  it('takes map keys from the environment as written (tenants, callers, providers are case-sensitive), field names in any case', () => {
    const { config } = loadConfig({
      env: {
        SLUICE_RATE_LIMIT__TENANT_OVERRIDES__AcmeCorp__REQUESTS_PER_WINDOW: '1',
        SLUICE_RATE_LIMIT__CALLER_OVERRIDES__ci_Bot__REQUESTS_PER_WINDOW: '7',
        SLUICE_CIRCUIT_BREAKER__PROVIDERS__MyHook__FAILURE_THRESHOLD: '3',
        SLUICE_PROVIDERS: '[{name: hook, type: webhook, url: "https://example.com/h"}]',
        SLUICE_PROVIDERS__0__HEADERS__X_Tenant: 'acme',
      },
    });
    expect(Object.keys(config.rate_limit.tenant_overrides)).toEqual(['AcmeCorp']);
    expect(config.rate_limit.tenant_overrides['AcmeCorp']?.requests_per_window).toBe(1);
    expect(config.rate_limit.caller_overrides['ci_Bot']?.requests_per_window).toBe(7);
    expect(config.circuit_breaker.providers['MyHook']?.failure_threshold).toBe(3);
    expect(config.providers[0]?.headers).toEqual({ X_Tenant: 'acme' });
  });

  it('applies env overrides over the file, typed as YAML scalars', () => {
    const file = tempFile('server:\n  port: 9000\n');
    const { config, envApplied } = loadConfig({
      file,
      env: { SLUICE_SERVER__PORT: '9100', SLUICE_STATE__BACKEND: 'redis', SLUICE_EXECUTOR__MAX_RETRIES: '0', SLUICE_AUTH_KEY: 'x' },
    });
    expect(config.server.port).toBe(9100);
    expect(config.state.backend).toBe('redis');
    expect(config.executor.max_retries).toBe(0);
    expect(envApplied.sort()).toEqual(['SLUICE_EXECUTOR__MAX_RETRIES', 'SLUICE_SERVER__PORT', 'SLUICE_STATE__BACKEND']);
  });

  it('sets list entries from env by index', () => {
    const { config } = loadConfig({ env: { SLUICE_PROVIDERS: '[{name: hook, type: webhook, url: "http://a/b"}]', SLUICE_PROVIDERS__0__TIMEOUT_MS: '500' } });
    expect(config.providers[0]).toMatchObject({ name: 'hook', timeout_ms: 500 });
  });

  it('refuses an env override for an unknown key', () => {
    expect(() => loadConfig({ env: { SLUICE_STATE__BAKEND: 'redis' } })).toThrow(/state\.bakend: unknown key/);
    expect(() => loadConfig({ env: { SLUICE_STAT__BACKEND: 'redis' } })).toThrow(/SLUICE_STAT__BACKEND/);
  });

  it('names, without applying them, SLUICE_ variables with one underscore where __ belongs', () => {
    const env = {
      SLUICE_SERVER_PORT: '9999',
      SLUICE_STATE_MACHINES_ENABLED: 'true',
      SLUICE_RATE_LIMIT_ENABLED: 'true',
      // Not overrides: a whole section, the reserved names, a client's and a host's settings.
      SLUICE_STATE_MACHINES: '[]',
      SLUICE_AUTH_KEY: 'k',
      SLUICE_URL: 'http://x',
      SLUICE_POSTGRES_PASSWORD: 'p',
    };
    const { config, envMisspelt } = loadConfig({ env });
    expect(envMisspelt.sort()).toEqual(['SLUICE_RATE_LIMIT_ENABLED', 'SLUICE_SERVER_PORT', 'SLUICE_STATE_MACHINES_ENABLED']);
    expect(config.server.port).toBe(8080);
  });

  it('refuses a first retry delay above the cap on one retry delay', () => {
    expect(() => loadConfig({ env: { SLUICE_EXECUTOR__BACKOFF_BASE_MS: '20000' } })).toThrow(/executor\.backoff_base_ms: .*must not exceed backoff_max_ms/);
    expect(loadConfig({ env: { SLUICE_EXECUTOR__BACKOFF_BASE_MS: '20000', SLUICE_EXECUTOR__BACKOFF_MAX_MS: '20000' } }).config.executor.backoff_base_ms).toBe(
      20000,
    );
  });

  it('lets flags win over env and file', () => {
    const { config } = loadConfig({ env: { SLUICE_SERVER__PORT: '9100' }, overrides: { 'server.port': 7000, 'server.host': undefined } });
    expect(config.server.port).toBe(7000);
  });

  it('refuses a bad value in the file or env even when a later layer replaces it', () => {
    const file = tempFile('server:\n  port: eighty\n');
    expect(() => loadConfig({ file, env: {}, overrides: { 'server.port': 31190 } })).toThrow(/sluice\.yaml\):\n {2}- server\.port: /);
    expect(() => loadConfig({ file, env: { SLUICE_SERVER__PORT: '9100' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { SLUICE_SERVER__PORT: 'eighty' }, overrides: { 'server.port': 7000 } })).toThrow(/\(environment\):\n {2}- server\.port: /);
  });

  it('leaves rules across keys to the merged config, so env may complete the file', () => {
    const file = tempFile('auth:\n  enabled: true\n');
    expect(loadConfig({ file, env: { SLUICE_AUTH__FILE: '/etc/sluice/credentials.yaml' } }).config.auth.file).toBe('/etc/sluice/credentials.yaml');
    expect(() => loadConfig({ file, env: {} })).toThrow(/auth\.file: auth\.enabled needs auth\.file/);
  });

  it('reads the file named by SLUICE_CONFIG', () => {
    const file = tempFile('server:\n  port: 9300\n');
    expect(loadConfig({ env: { SLUICE_CONFIG: file } }).config.server.port).toBe(9300);
  });

  it('reports a missing file and non-mapping YAML clearly', () => {
    expect(() => loadConfig({ file: '/nonexistent/sluice.yaml', env: {} })).toThrow(/cannot read configuration file \/nonexistent\/sluice.yaml: ENOENT/);
    expect(() => loadConfig({ file: tempFile('- a\n- b\n'), env: {} })).toThrow(/top level must be a mapping/);
  });
});
