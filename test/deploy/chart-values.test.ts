import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startRedisServer } from '../support/redis-server.js';
import { container, deployment, loadRenderedConfig, type Json } from './support/chart.js';
import { CHART, HELM_TEMPLATE_PRODUCTION } from './support/commands.js';
import { helm, parseManifests, render, type K8sObject } from './support/helm.js';
import { requiredFieldErrors, schemaErrors } from './support/k8s-checks.js';

/** helm template with --set flags; returns the exit code, the error text and (on success) objects. */
function template(...sets: string[]): { code: number | null; stderr: string; docs: K8sObject[] } {
  const res = helm(['template', 'sluice', CHART, ...sets.flatMap((s) => ['--set', s])]);
  return { code: res.code, stderr: res.stderr, docs: res.code === 0 ? parseManifests(res.stdout) : [] };
}

const annotations = (docs: K8sObject[], suffix: 'api' | 'worker') => deployment(docs, suffix)?.spec.template.metadata.annotations as Record<string, string>;

describe('the chart refuses shapes that cannot work', () => {
  it('more than one API replica on the memory backend fails with a clear message', () => {
    const res = template('api.replicaCount=3', 'state.backend=memory');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('state.backend=memory keeps all state inside one process');
    expect(res.stderr).toContain('api.replicaCount=3');
  });

  it('autoscaling on the memory backend fails', () => {
    const res = template('api.autoscaling.enabled=true');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('state.backend=memory cannot autoscale');
  });

  it('the redis backend without any Redis fails', () => {
    const res = template('state.backend=redis');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('state.backend=redis needs a Redis');
  });

  it.each([
    ['config.state.backend=redis', 'config.state is set by the chart'],
    ['config.server.port=9000', 'config.server.port/host are set by the chart'],
    ['config.rules.directory=/x', 'config.rules.directory is set by the chart'],
  ])('chart-owned config keys are refused: %s', (set, message) => {
    const res = template(set);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(message);
  });

  it('values.schema.json (draft 2020-12) rejects unknown keys and bad values', () => {
    expect(template('api.replicas=3').stderr).toMatch(/additional properties 'replicas' not allowed/);
    expect(template('state.backend=postgres').stderr).toMatch(/\/state\/backend/);
    expect(template('authKey=short').stderr).toMatch(/\/authKey/);
    // Misspelt keys the API server or the subchart would silently drop: the override would do nothing.
    expect(template('state.backend=redis', 'redis.enabled=true', 'redis.persistence.enable=false').stderr).toMatch(
      /additional properties 'enable' not allowed/,
    );
    expect(template('securityContext.readOnlyRootFileSystem=false').stderr).toMatch(/additional properties 'readOnlyRootFileSystem' not allowed/);
    expect(template('podSecurityContext.runAsUsr=1').stderr).toMatch(/additional properties 'runAsUsr' not allowed/);
    expect(template('state.backend=redis', 'redis.enabled=true', 'redis.persistence.enabled=false', 'securityContext.privileged=false').stderr).toBe('');
  });

  it('existingSecret (credentials, auth key) still leaves the Redis password and the audit URL in the chart Secret the pods read them from', () => {
    const res = template(
      'state.backend=redis',
      'externalRedis.host=redis.internal',
      'externalRedis.password=pw',
      'existingSecret=sluice-secrets',
      'auditPostgres.enabled=true',
      'auditPostgres.url=postgres://u:p@db/sluice',
    );
    expect(res.stderr).toBe('');
    const secrets = res.docs.filter((d) => d.kind === 'Secret') as Json[];
    expect(secrets.map((s) => s.metadata.name)).toEqual(['sluice']);
    expect(Object.keys(secrets[0]?.data ?? {}).sort()).toEqual(['audit-postgres-url', 'redis-password']);
    // Every Secret a pod reads is the chart's (holding the key) or the one named by existingSecret.
    for (const role of ['api', 'worker'] as const) {
      for (const env of container(deployment(res.docs, role)).env as Json[]) {
        const ref = env.valueFrom?.secretKeyRef as { name: string; key: string } | undefined;
        if (!ref) continue;
        if (ref.name === 'sluice-secrets') continue;
        expect(ref.name, env.name).toBe('sluice');
        expect(Object.keys(secrets[0]?.data ?? {}), env.name).toContain(ref.key);
      }
    }
  });
});

describe('config and rules changes roll the pods (checksum annotations)', () => {
  const base = render(HELM_TEMPLATE_PRODUCTION);
  const variant = (...sets: string[]) => render(`${HELM_TEMPLATE_PRODUCTION} ${sets.map((s) => `--set ${s}`).join(' ')}`);

  it('the same values give the same checksums', () => {
    expect(annotations(render(HELM_TEMPLATE_PRODUCTION), 'api')).toEqual(annotations(base, 'api'));
  });

  it('a config change changes checksum/config on api and worker pods', () => {
    const changed = variant('config.logging.level=debug');
    for (const c of ['api', 'worker'] as const) {
      expect(annotations(changed, c)['checksum/config']).not.toBe(annotations(base, c)['checksum/config']);
      expect(annotations(changed, c)['checksum/rules']).toBe(annotations(base, c)['checksum/rules']);
    }
  });

  it('a rules change changes checksum/rules', () => {
    const changed = variant('rules.files.extra\\.yaml=x');
    expect(annotations(changed, 'api')['checksum/rules']).not.toBe(annotations(base, 'api')['checksum/rules']);
    expect(annotations(changed, 'api')['checksum/config']).toBe(annotations(base, 'api')['checksum/config']);
  });
});

describe('other supported shapes render valid manifests', () => {
  const check = (docs: K8sObject[], external: string[] = []) => {
    expect(schemaErrors(docs)).toEqual([]);
    expect(requiredFieldErrors(docs, { shutdownTimeoutSeconds: loadRenderedConfig(docs).config.server.shutdown_timeout_seconds, external })).toEqual([]);
  };
  const env = (docs: K8sObject[]) => Object.fromEntries((container(deployment(docs, 'api')).env as Json[]).map((e) => [e.name, e.value ?? e.valueFrom]));

  it('the bundled Redis subchart (redis.enabled=true)', () => {
    const { docs, stderr } = template('state.backend=redis', 'redis.enabled=true');
    expect(stderr).toBe('');
    check(docs);
    const sts = docs.find((d) => d.kind === 'StatefulSet') as Json;
    expect(sts.metadata.name).toBe('sluice-redis');
    expect(sts.spec.template.spec.containers[0].args).toContain('--appendonly');
    expect(env(docs).SLUICE_STATE__URL).toBe('redis://sluice-redis:6379/0');
  });

  it('the bundled Redis refuses writes at its maxmemory, under its container limit, rather than being OOM-killed (the args a real redis-server takes)', async () => {
    const { docs } = template('state.backend=redis', 'redis.enabled=true', 'redis.maxmemory=100mb');
    const args = (docs.find((d) => d.kind === 'StatefulSet') as Json).spec.template.spec.containers[0].args as string[];
    const at = args.indexOf('--maxmemory');
    expect(args.slice(at, at + 4)).toEqual(['--maxmemory', '100mb', '--maxmemory-policy', 'noeviction']);
    // The rendered flags, as the image's redis-server reads them (its own --dir and port aside).
    const redis = await startRedisServer({ args: args.slice(at) });
    const client = new Redis(redis.url);
    try {
      expect(await client.config('GET', 'maxmemory')).toEqual(['maxmemory', String(100 * 1024 * 1024)]);
      expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    } finally {
      client.disconnect();
      await redis.stop();
    }
    expect(template('state.backend=redis', 'redis.enabled=true', 'redis.maxmemory=lots').stderr).toMatch(/\/redis\/maxmemory/);
  });

  it('external Redis with an inline password, TLS, username and db; inline credentials and auth key', () => {
    const key = 'a'.repeat(64);
    const { docs, stderr } = template(
      'state.backend=redis',
      'externalRedis.host=redis.internal',
      'externalRedis.port=6380',
      'externalRedis.db=2',
      'externalRedis.username=sluice',
      'externalRedis.password=s3cret',
      'externalRedis.tls.enabled=true',
      `authKey=${key}`,
      'credentials.file=api_keys: []',
    );
    expect(stderr).toBe('');
    check(docs);
    expect(env(docs).SLUICE_STATE__URL).toBe('rediss://sluice:$(REDIS_PASSWORD)@redis.internal:6380/2');
    const secret = docs.find((d) => d.kind === 'Secret') as Json;
    const decoded = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    expect(decoded).toEqual({ 'auth-key': key, 'credentials.yaml': 'api_keys: []', 'redis-password': 's3cret' });
    expect(annotations(docs, 'api')['checksum/secret-env']).toMatch(/^[0-9a-f]{64}$/);
    const mount = (container(deployment(docs, 'api')).volumeMounts as Json[]).find((m) => m.name === 'credentials');
    expect(mount).toMatchObject({ mountPath: '/etc/sluice/credentials', readOnly: true });
  });

  it('externalRedis.allowEviction reaches the config as state.allow_eviction (the chart owns config.state)', () => {
    const { docs, stderr } = template('state.backend=redis', 'externalRedis.host=redis.internal', 'externalRedis.allowEviction=true');
    expect(stderr).toBe('');
    expect(loadRenderedConfig(docs).config.state.allow_eviction).toBe(true);
    expect(loadRenderedConfig(template('state.backend=redis', 'externalRedis.host=redis.internal').docs).config.state.allow_eviction).toBe(false);
  });

  it('a rediss:// server signed by a private CA: its Secret mounted in both pods and trusted through NODE_EXTRA_CA_CERTS', () => {
    const { docs, stderr } = template(
      'state.backend=redis',
      'externalRedis.host=redis.internal',
      'externalRedis.tls.enabled=true',
      'externalRedis.tls.caSecret=redis-ca',
    );
    expect(stderr).toBe('');
    check(docs, ['redis-ca']);
    for (const part of ['api', 'worker'] as const) {
      const pod = deployment(docs, part)?.spec.template.spec as Json;
      expect((container(deployment(docs, part)).env as Json[]).find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value, part).toBe('/etc/sluice/redis-ca/ca.crt');
      expect(
        (container(deployment(docs, part)).volumeMounts as Json[]).find((m) => m.name === 'redis-ca'),
        part,
      ).toMatchObject({ mountPath: '/etc/sluice/redis-ca' });
      expect((pod.volumes as Json[]).find((v) => v.name === 'redis-ca')?.secret, part).toEqual({
        secretName: 'redis-ca',
        items: [{ key: 'ca.crt', path: 'ca.crt' }],
      });
    }
    // Without TLS the CA has no use: nothing is mounted.
    const plain = template('state.backend=redis', 'externalRedis.host=redis.internal', 'externalRedis.tls.caSecret=redis-ca');
    expect(env(plain.docs).NODE_EXTRA_CA_CERTS).toBeUndefined();
  });

  it('an external Redis Cluster or Sentinel set: the addresses and the password variable in sluice.yaml, no URL', () => {
    const cluster = template(
      'state.backend=redis',
      'externalRedis.topology=cluster',
      'externalRedis.nodes={redis-0.redis:6379,redis-1.redis:6379}',
      'externalRedis.password=s3cret',
      'externalRedis.waitReplicas=1',
    );
    expect(cluster.stderr).toBe('');
    check(cluster.docs);
    expect(env(cluster.docs).SLUICE_STATE__URL).toBeUndefined();
    expect((container(deployment(cluster.docs, 'worker')).env as Json[]).find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom.secretKeyRef).toEqual({
      name: 'sluice',
      key: 'redis-password',
    });
    expect(loadRenderedConfig(cluster.docs).config.state).toMatchObject({
      backend: 'redis',
      cluster: { nodes: ['redis-0.redis:6379', 'redis-1.redis:6379'] },
      password_env: 'REDIS_PASSWORD',
      wait_replicas: 1,
    });

    const sentinel = template(
      'state.backend=redis',
      'externalRedis.topology=sentinel',
      'externalRedis.nodes={s-0:26379,s-1:26379,s-2:26379}',
      'externalRedis.sentinelName=main',
    );
    expect(sentinel.stderr).toBe('');
    expect(loadRenderedConfig(sentinel.docs).config.state).toMatchObject({
      sentinels: ['s-0:26379', 's-1:26379', 's-2:26379'],
      name: 'main',
      wait_replicas: 0,
    });
    expect(loadRenderedConfig(sentinel.docs).config.state.password_env).toBeUndefined();
    // Sentinels that require the data nodes' password too.
    const guarded = template(
      'state.backend=redis',
      'externalRedis.topology=sentinel',
      'externalRedis.nodes={s-0:26379}',
      'externalRedis.existingSecret=redis-pw',
      'externalRedis.sentinelAuth=true',
    );
    expect(guarded.stderr).toBe('');
    expect(loadRenderedConfig(guarded.docs).config.state).toMatchObject({ password_env: 'REDIS_PASSWORD', sentinel_password_env: 'REDIS_PASSWORD' });
    expect(
      template('state.backend=redis', 'externalRedis.topology=sentinel', 'externalRedis.nodes={s-0:26379}', 'externalRedis.sentinelAuth=true').stderr,
    ).toContain('externalRedis.sentinelAuth needs');

    expect(template('state.backend=redis', 'externalRedis.topology=cluster').stderr).toContain('externalRedis.topology=cluster needs externalRedis.nodes');
    expect(template('state.backend=redis', 'externalRedis.topology=sentinel', 'redis.enabled=true').stderr).toContain('the bundled Redis');
    expect(template('state.backend=redis', 'externalRedis.topology=cluster', 'externalRedis.nodes={a:1}', 'externalRedis.host=h').stderr).toContain(
      'externalRedis.host is for topology=single',
    );
    // TLS and a username reach only a single primary: with a Cluster or Sentinels they would be dropped silently.
    for (const setting of ['externalRedis.tls.enabled=true', 'externalRedis.username=app']) {
      for (const topology of ['cluster', 'sentinel']) {
        const refused = template(
          'state.backend=redis',
          `externalRedis.topology=${topology}`,
          'externalRedis.nodes={a:1}',
          'externalRedis.sentinelName=m',
          setting,
        );
        expect(refused.stderr, `${topology} ${setting}`).toContain('apply to topology=single only');
      }
    }
    expect(template('state.backend=redis', 'externalRedis.topology=ring', 'externalRedis.host=h').stderr).toMatch(/topology/);
    expect(template('state.backend=redis', 'externalRedis.topology=cluster', 'externalRedis.nodes={redis://a:1}').stderr).toMatch(/nodes/);
  });

  it('the audit trail in PostgreSQL: the URL from the chart Secret or an existing one, the backend in sluice.yaml', () => {
    const inline = template(
      'state.backend=redis',
      'externalRedis.host=redis.internal',
      'auditPostgres.enabled=true',
      'auditPostgres.url=postgres://u:p@db:5432/sluice',
      'auditPostgres.poolSize=4',
    );
    expect(inline.stderr).toBe('');
    check(inline.docs);
    for (const role of ['api', 'worker'] as const) {
      const ref = (container(deployment(inline.docs, role)).env as Json[]).find((e) => e.name === 'AUDIT_DATABASE_URL')?.valueFrom.secretKeyRef;
      expect(ref).toEqual({ name: 'sluice', key: 'audit-postgres-url' });
    }
    const secret = inline.docs.find((d) => d.kind === 'Secret') as Json;
    expect(Buffer.from(secret.data['audit-postgres-url'], 'base64').toString()).toBe('postgres://u:p@db:5432/sluice');
    // What sluice loads: the backend, and the name of the variable the Secret fills.
    const { config } = loadRenderedConfig(inline.docs);
    expect(config.audit).toMatchObject({ backend: 'postgres', postgres: { url_env: 'AUDIT_DATABASE_URL', schema: 'sluice_audit', pool_size: 4 } });

    const existing = template('auditPostgres.enabled=true', 'auditPostgres.existingSecret=audit-db', 'auditPostgres.existingSecretUrlKey=url');
    expect(existing.stderr).toBe('');
    const ref = (container(deployment(existing.docs, 'api')).env as Json[]).find((e) => e.name === 'AUDIT_DATABASE_URL')?.valueFrom.secretKeyRef;
    expect(ref).toEqual({ name: 'audit-db', key: 'url' });
    expect(existing.docs.some((d) => d.kind === 'Secret')).toBe(false);

    expect(template('auditPostgres.enabled=true').stderr).toContain('auditPostgres.enabled=true needs the database URL');
    expect(template('auditPostgres.enabled=true', 'auditPostgres.url=postgres://x', 'auditPostgres.existingSecret=s').stderr).toContain('not both');
    expect(template('auditPostgres.enabled=true', 'auditPostgres.url=postgres://x', 'config.audit.backend=state').stderr).toContain('set by the chart');
  });

  it('rules from an existing ConfigMap; probes switched off', () => {
    const { docs } = template('rules.existingConfigMap=my-rules', 'api.probes.startup.enabled=false', 'api.probes.liveness.enabled=false');
    const c = container(deployment(docs, 'api'));
    expect(c.startupProbe).toBeUndefined();
    expect(c.livenessProbe).toBeUndefined();
    expect(c.readinessProbe).toBeDefined();
    expect(loadRenderedConfig(docs).config.rules.directory).toBe('/etc/sluice/rules');
    expect(schemaErrors(docs)).toEqual([]);
    // The switch works, and the required-field check notices the missing liveness probe.
    expect(requiredFieldErrors(docs, { shutdownTimeoutSeconds: 30, external: ['my-rules'] })).toEqual([
      'Deployment/sluice-api: container api: livenessProbe missing',
    ]);
  });
});
