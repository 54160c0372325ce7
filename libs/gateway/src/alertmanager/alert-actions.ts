import type { SluiceConfig } from '@sluice/config';
import { ActionInput, errors, type ErrorDetail, type PostableAlert } from '@sluice/core';
import { alertFingerprint } from './alert-fingerprint.js';

type AlertRoute = SluiceConfig['alertmanager']['routes'][number];
type AlertField = AlertRoute['namespace'];

/** An alert from Prometheus (`POST /api/v2/alerts`) or an Alertmanager webhook (which says its status and fingerprint). */
export interface IncomingAlert extends PostableAlert {
  status?: 'firing' | 'resolved';
  fingerprint?: string | undefined;
}

/**
 * The actions the alerts become, in order, or a 400 naming every alert that cannot become one
 * (no route takes it, a label a route reads is missing, a field is not a valid name): nothing is
 * dispatched unless every alert maps. An alert is resolved when it says so (a webhook) or, saying
 * nothing (Prometheus), when its endsAt has passed.
 */
export function actionsOfAlerts(alerts: readonly IncomingAlert[], routes: readonly AlertRoute[], nowMs: number): ActionInput[] {
  const problems: ErrorDetail[] = [];
  const actions: ActionInput[] = [];
  alerts.forEach((alert, i) => {
    const route = routes.find((r) => Object.entries(r.match).every(([name, value]) => alert.labels[name] === value));
    if (route === undefined) {
      problems.push({ path: `${i}.labels`, message: `no alertmanager route takes this alert (${describe(alert.labels)})` });
      return;
    }
    const startsAt = instant(alert.startsAt);
    const endsAt = instant(alert.endsAt);
    // A webhook says its status; Prometheus marks a resolved alert by an endsAt that has passed.
    const status = alert.status ?? (endsAt !== undefined && Date.parse(endsAt) <= nowMs ? 'resolved' : 'firing');
    const fields = {
      namespace: fieldOf(route.namespace, alert),
      tenant: fieldOf(route.tenant, alert),
      provider: fieldOf(route.provider, alert),
      action_type: fieldOf(route.action_type, alert),
    };
    for (const [name, value] of Object.entries(fields)) {
      if (value === null) problems.push({ path: `${i}.labels`, message: `the route's ${name} reads a label this alert lacks (${describe(alert.labels)})` });
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
    if (!parsed.success) {
      if (Object.values(fields).every((v) => v !== null)) {
        for (const issue of parsed.error.issues) problems.push({ path: `${i}.${issue.path.join('.')}`, message: `the action of this alert: ${issue.message}` });
      }
      return;
    }
    actions.push(parsed.data);
  });
  if (problems.length > 0) throw errors.validation(problems);
  return actions;
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
