import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import type { K8sObject } from './helm.js';

/** Rendered YAML: any shape. */
// biome-ignore lint/suspicious/noExplicitAny: rendered YAML documents of every shape, walked freely by the checks.
type Json = Record<string, any>;
type Validatable = new (data: unknown) => { validate(): void };

const MODELS: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'autoscaling/v2': autoscalingV2,
  'networking.k8s.io/v1': networkingV1,
  'policy/v1': policyV1,
};

const id = (d: K8sObject) => `${d.kind}/${d.metadata?.name}`;

/**
 * Validates every object against the Kubernetes OpenAPI schemas (kubernetes-models). A kind we
 * have no schema for is an error, except the Prometheus Operator's ServiceMonitor and PrometheusRule
 * CRDs, which get structural checks (promtool checks the rules themselves: prometheus-alerts.test.ts).
 * (The schemas do not reject unknown fields; requiredFieldErrors covers what must be present.)
 */
export function schemaErrors(docs: readonly K8sObject[]): string[] {
  const errors: string[] = [];
  for (const doc of docs) {
    if (doc.apiVersion === 'monitoring.coreos.com/v1' && doc.kind === 'ServiceMonitor') {
      errors.push(...serviceMonitorShape(doc as Json));
      continue;
    }
    if (doc.apiVersion === 'monitoring.coreos.com/v1' && doc.kind === 'PrometheusRule') {
      errors.push(...prometheusRuleShape(doc as Json));
      continue;
    }
    const Model = MODELS[doc.apiVersion]?.[doc.kind] as Validatable | undefined;
    if (!Model) {
      errors.push(`${id(doc)}: no Kubernetes schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    try {
      new Model(doc).validate();
    } catch (err) {
      errors.push(`${id(doc)}: ${(err as Error).message}`);
    }
  }
  return errors;
}

function serviceMonitorShape(sm: Json): string[] {
  const errors: string[] = [];
  const name = `ServiceMonitor/${sm.metadata?.name}`;
  if (!sm.metadata?.name) errors.push(`${name}: metadata.name missing`);
  if (typeof sm.spec?.selector?.matchLabels !== 'object') errors.push(`${name}: spec.selector.matchLabels missing`);
  if (!Array.isArray(sm.spec?.endpoints) || sm.spec.endpoints.length === 0) errors.push(`${name}: spec.endpoints missing`);
  for (const ep of sm.spec?.endpoints ?? []) {
    if (typeof ep.port !== 'string') errors.push(`${name}: every endpoint needs a named port`);
    if (ep.path !== '/metrics') errors.push(`${name}: endpoint path must be /metrics`);
  }
  return errors;
}

function prometheusRuleShape(rule: Json): string[] {
  const errors: string[] = [];
  const name = `PrometheusRule/${rule.metadata?.name}`;
  if (!rule.metadata?.name) errors.push(`${name}: metadata.name missing`);
  if (!Array.isArray(rule.spec?.groups) || rule.spec.groups.length === 0) errors.push(`${name}: spec.groups missing`);
  for (const group of rule.spec?.groups ?? []) {
    if (typeof group.name !== 'string') errors.push(`${name}: every group needs a name`);
    if (!Array.isArray(group.rules) || group.rules.length === 0) errors.push(`${name}: group ${group.name} has no rules`);
    for (const r of group.rules ?? []) {
      if (typeof r.alert !== 'string' && typeof r.record !== 'string') errors.push(`${name}: a rule of ${group.name} is neither an alert nor a recording rule`);
      if (typeof r.expr !== 'string') errors.push(`${name}: ${r.alert ?? r.record} has no expr`);
    }
  }
  return errors;
}

export interface RequiredFieldOptions {
  /** config.server.shutdown_timeout_seconds of the render. */
  shutdownTimeoutSeconds: number;
  /** Secrets/ConfigMaps the user provides (existingSecret, ...): referenced but not rendered. */
  external?: string[];
}

const REQUIRED_LABELS = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'helm.sh/chart'];

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** What the chart promises beyond schema validity: probes, resources, security, labels, wiring. */
export function requiredFieldErrors(docs: readonly K8sObject[], opts: RequiredFieldOptions): string[] {
  const errors: string[] = [];
  const err = (d: K8sObject, msg: string) => errors.push(`${id(d)}: ${msg}`);
  const named = (kind: string, name: string) => docs.some((d) => d.kind === kind && d.metadata.name === name) || (opts.external ?? []).includes(name);
  const workloads = docs.filter((d) => d.kind === 'Deployment' || d.kind === 'StatefulSet');

  for (const d of docs) {
    for (const label of REQUIRED_LABELS) if (!d.metadata.labels?.[label]) err(d, `metadata.labels["${label}"] missing`);
  }

  for (const w of workloads) {
    const spec = (w as Json).spec ?? {};
    const pod = spec.template?.spec ?? {};
    const podLabels = spec.template?.metadata?.labels;
    if (!matches(spec.selector?.matchLabels, podLabels)) err(w, 'spec.selector.matchLabels must select the pod template labels');
    for (const label of REQUIRED_LABELS) if (!podLabels?.[label]) err(w, `pod template label "${label}" missing`);
    if (pod.automountServiceAccountToken !== false) err(w, 'automountServiceAccountToken must be false');
    if (pod.securityContext?.runAsNonRoot !== true) err(w, 'pod securityContext.runAsNonRoot must be true');
    if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault') err(w, 'pod securityContext.seccompProfile must be RuntimeDefault');
    const volumes = new Map<string, Json>((pod.volumes ?? []).map((v: Json) => [v.name, v]));
    for (const claim of spec.volumeClaimTemplates ?? []) volumes.set(claim.metadata?.name, { name: claim.metadata?.name });
    const isSluice = podLabels?.['app.kubernetes.io/name'] === 'sluice';
    if (!Array.isArray(pod.containers) || pod.containers.length === 0) err(w, 'no containers');
    for (const c of (pod.containers ?? []) as Json[]) {
      const at = (m: string) => err(w, `container ${c.name}: ${m}`);
      if (!c.resources?.requests?.cpu) at('resources.requests.cpu missing');
      if (!c.resources?.requests?.memory) at('resources.requests.memory missing');
      if (!c.resources?.limits?.memory) at('resources.limits.memory missing');
      if (!c.livenessProbe) at('livenessProbe missing');
      if (!c.readinessProbe) at('readinessProbe missing');
      const sc = c.securityContext ?? {};
      if (sc.runAsNonRoot !== true) at('securityContext.runAsNonRoot must be true');
      if (sc.readOnlyRootFilesystem !== true) at('securityContext.readOnlyRootFilesystem must be true');
      if (sc.allowPrivilegeEscalation !== false) at('securityContext.allowPrivilegeEscalation must be false');
      if (!(sc.capabilities?.drop ?? []).includes('ALL')) at('securityContext.capabilities.drop must include ALL');
      if (sc.seccompProfile?.type !== 'RuntimeDefault') at('securityContext.seccompProfile must be RuntimeDefault');
      if (!/:[\w.-]+$/.test(c.image ?? '') || /:latest$/.test(c.image)) at(`image "${c.image}" needs a pinned tag`);
      const portNames = new Set((c.ports ?? []).map((p: Json) => p.name));
      for (const p of c.ports ?? []) if (!p.name) at(`port ${p.containerPort} has no name`);
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        const port = c[probe]?.httpGet?.port;
        if (port !== undefined && !portNames.has(port)) at(`${probe} port "${port}" is not a named container port`);
      }
      for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) at(`volumeMount ${m.name} has no volume`);
      if (!isSluice) continue;
      if (c.livenessProbe && c.livenessProbe.httpGet?.path !== '/health') at('livenessProbe must GET /health (process only, never Redis)');
      if (c.readinessProbe && c.readinessProbe.httpGet?.path !== '/ready') at('readinessProbe must GET /ready (checks Redis, drains)');
      if (!c.lifecycle?.preStop) at('lifecycle.preStop missing');
      if (!(c.volumeMounts ?? []).some((m: Json) => m.mountPath === '/tmp')) at('no writable /tmp with a read-only root filesystem');
      const sleep = Number((c.lifecycle?.preStop?.exec?.command ?? []).at(-1) ?? 0);
      const grace = pod.terminationGracePeriodSeconds;
      if (!(typeof grace === 'number' && grace > opts.shutdownTimeoutSeconds + sleep)) {
        err(w, `terminationGracePeriodSeconds (${grace}) must exceed shutdown_timeout_seconds (${opts.shutdownTimeoutSeconds}) + preStop (${sleep})`);
      }
    }
    if (isSluice && !spec.template?.metadata?.annotations?.['checksum/config']) err(w, 'checksum/config pod annotation missing');
    for (const v of volumes.values()) {
      if (v.configMap && !named('ConfigMap', v.configMap.name)) err(w, `volume ${v.name}: ConfigMap ${v.configMap.name} not rendered`);
      if (v.secret && !named('Secret', v.secret.secretName)) err(w, `volume ${v.name}: Secret ${v.secret.secretName} not rendered`);
    }
    for (const c of (pod.containers ?? []) as Json[]) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef?.name;
        if (ref && !named('Secret', ref)) err(w, `env ${e.name}: Secret ${ref} not rendered`);
      }
    }
  }

  const podsOf = (selector: Record<string, string> | undefined) => workloads.filter((w) => matches(selector, (w as Json).spec?.template?.metadata?.labels));
  const containerPortNames = (ws: K8sObject[]) =>
    new Set(ws.flatMap((w) => ((w as Json).spec.template.spec.containers as Json[]).flatMap((c) => (c.ports ?? []).map((p: Json) => p.name))));

  for (const s of docs.filter((d) => d.kind === 'Service') as Json[]) {
    const selected = podsOf(s.spec?.selector);
    if (selected.length === 0) err(s as K8sObject, 'selector matches no workload');
    const names = containerPortNames(selected);
    for (const p of s.spec?.ports ?? []) {
      if (!p.name) err(s as K8sObject, `port ${p.port} has no name`);
      if (typeof p.targetPort === 'string' && !names.has(p.targetPort)) err(s as K8sObject, `targetPort ${p.targetPort} is not a container port`);
    }
  }
  const servicePort = (name: string, port: string) =>
    (docs.find((d) => d.kind === 'Service' && d.metadata.name === name) as Json | undefined)?.spec?.ports?.some((p: Json) => p.name === port);
  for (const ing of docs.filter((d) => d.kind === 'Ingress') as Json[]) {
    for (const rule of ing.spec?.rules ?? []) {
      for (const path of rule.http?.paths ?? []) {
        const svc = path.backend?.service;
        if (!servicePort(svc?.name, svc?.port?.name)) err(ing as K8sObject, `backend ${svc?.name}:${svc?.port?.name} is not a rendered Service port`);
      }
    }
  }
  for (const hpa of docs.filter((d) => d.kind === 'HorizontalPodAutoscaler') as Json[]) {
    const target = workloads.find((w) => w.kind === hpa.spec?.scaleTargetRef?.kind && w.metadata.name === hpa.spec?.scaleTargetRef?.name) as Json | undefined;
    if (!target) err(hpa as K8sObject, 'scaleTargetRef is not a rendered workload');
    else if (target.spec.replicas !== undefined) err(hpa as K8sObject, `${target.metadata.name} sets spec.replicas, which fights the autoscaler`);
  }
  for (const pdb of docs.filter((d) => d.kind === 'PodDisruptionBudget') as Json[]) {
    if (podsOf(pdb.spec?.selector?.matchLabels).length === 0) err(pdb as K8sObject, 'selector matches no workload');
  }
  for (const sm of docs.filter((d) => d.kind === 'ServiceMonitor') as Json[]) {
    const services = docs.filter((d) => d.kind === 'Service' && matches(sm.spec?.selector?.matchLabels, d.metadata.labels)) as Json[];
    if (services.length === 0) err(sm as K8sObject, 'selector matches no Service');
    for (const ep of sm.spec?.endpoints ?? []) {
      if (!services.some((s) => s.spec.ports.some((p: Json) => p.name === ep.port))) err(sm as K8sObject, `endpoint port ${ep.port} is on no selected Service`);
    }
  }
  return errors;
}
