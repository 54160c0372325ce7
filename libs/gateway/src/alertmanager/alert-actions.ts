import type { SluiceConfig } from '@sluice/config';
import { ActionInput, type ErrorDetail, type PostableAlert } from '@sluice/core';
import { alertFingerprint } from './alert-fingerprint.js';

type AlertRoute = SluiceConfig['alertmanager']['routes'][number];
type AlertField = AlertRoute['namespace'];

/** An alert from Prometheus (`POST /api/v2/alerts`) or an Alertmanager webhook (which says its status and fingerprint). */
export interface IncomingAlert extends PostableAlert {
  status?: 'firing' | 'resolved';
  fingerprint?: string | undefined;
}

/** What one alert becomes: its action, or why it cannot become one. */
export type MappedAlert = { action: ActionInput } | { problems: ErrorDetail[] };

/**
 * The action each alert becomes, in order, or the problems that keep it from becoming one (no
 * route takes it, a label a route reads is missing, a field is not a valid name), each naming the
 * alert by its position. An alert is resolved when it says so (a webhook) or, saying nothing
 * (Prometheus), when its endsAt has passed.
 */
export function actionsOfAlerts(alerts: readonly IncomingAlert[], routes: readonly AlertRoute[], nowMs: number): MappedAlert[] {
  return alerts.map((alert, i) => actionOfAlert(alert, i, routes, nowMs));
}

function actionOfAlert(sent: IncomingAlert, i: number, routes: readonly AlertRoute[], nowMs: number): MappedAlert {
  // Alertmanager drops empty-valued labels first: they are absent, and the fingerprint is over the rest.
  const alert = { ...sent, labels: Object.fromEntries(Object.entries(sent.labels).filter(([, value]) => value !== '')) };
  // An empty value matches an absent label (the alert's empty-valued labels are absent by now).
  const route = routes.find((r) => Object.entries(r.match).every(([name, value]) => (alert.labels[name] ?? '') === value));
  if (route === undefined) return { problems: [{ path: `${i}.labels`, message: `no alertmanager route takes this alert (${describe(alert.labels)})` }] };
  const startsAt = instant(alert.startsAt);
  const endsAt = instant(alert.endsAt);
  if (startsAt !== undefined && endsAt !== undefined && Date.parse(endsAt) < Date.parse(startsAt)) {
    return { problems: [{ path: `${i}.endsAt`, message: 'the alert ends before it starts (Alertmanager refuses it too)' }] };
  }
  // A webhook says its status; Prometheus marks a resolved alert by an endsAt that has passed.
  const status = alert.status ?? (endsAt !== undefined && Date.parse(endsAt) <= nowMs ? 'resolved' : 'firing');
  const fields = {
    namespace: fieldOf(route.namespace, alert),
    tenant: fieldOf(route.tenant, alert),
    provider: fieldOf(route.provider, alert),
    action_type: fieldOf(route.action_type, alert),
  };
  const missing = Object.entries(fields).filter(([, value]) => value === null);
  if (missing.length > 0) {
    return {
      problems: missing.map(([name]) => ({ path: `${i}.labels`, message: `the route's ${name} reads a label this alert lacks (${describe(alert.labels)})` })),
    };
  }
  const candidate = {
    ...fields,
    payload: {
      status,
      labels: alert.labels,
      annotations: alert.annotations ?? {},
      ...(startsAt !== undefined ? { startsAt } : {}),
      ...(endsAt !== undefined ? { endsAt } : {}),
      ...(alert.generatorURL !== undefined ? { generatorURL: alert.generatorURL } : {}),
    },
    metadata: { labels: alert.labels },
    fingerprint: alert.fingerprint ?? alertFingerprint(alert.labels),
    status,
    ...(startsAt !== undefined ? { starts_at: startsAt } : {}),
    ...(endsAt !== undefined ? { ends_at: endsAt } : {}),
  };
  const parsed = ActionInput.safeParse(candidate);
  if (parsed.success) return { action: parsed.data };
  return { problems: parsed.error.issues.map((issue) => ({ path: `${i}.${issue.path.join('.')}`, message: `the action of this alert: ${issue.message}` })) };
}

/** Go's zero time (`0001-01-01T00:00:00Z`, Alertmanager's "not set") reads as absent. */
function instant(value: string | undefined): string | undefined {
  return value === undefined || value.startsWith('0001-01-01') ? undefined : value;
}

function fieldOf(field: AlertField, alert: IncomingAlert): string | null {
  if (typeof field === 'string') return field;
  return alert.labels[field.label] ?? field.default ?? null;
}

/** A short label set for messages (values are the sender's, so bounded). */
function describe(labels: Readonly<Record<string, string>>): string {
  const text = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ');
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
