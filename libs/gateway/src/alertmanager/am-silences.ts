import { errors, type AmMatcher, type GettableSilence, type Silence, type SilenceMatcher } from '@sluice/core';

/*
 * Sluice silences in Alertmanager's form, for amtool: isRegex × isEqual are the four ops, the
 * state follows the window, and a query's `filter` matchers select silences having a matcher of
 * the same name, kind and value (Alertmanager's rule since 0.25).
 */

const OPS: Record<string, SilenceMatcher['op']> = {
  'false,true': 'equal',
  'false,false': 'not_equal',
  'true,true': 'regex',
  'true,false': 'not_regex',
};

export function fromAmMatcher(m: AmMatcher): SilenceMatcher {
  return { name: m.name, value: m.value, op: OPS[`${m.isRegex},${m.isEqual}`] ?? 'equal' };
}

function toAmMatcher(m: SilenceMatcher): AmMatcher {
  return { name: m.name, value: m.value, isRegex: m.op === 'regex' || m.op === 'not_regex', isEqual: m.op === 'equal' || m.op === 'regex' };
}

export function stateOf(silence: Pick<Silence, 'starts_at' | 'ends_at'>, nowMs: number): GettableSilence['status']['state'] {
  if (Date.parse(silence.ends_at) <= nowMs) return 'expired';
  return Date.parse(silence.starts_at) > nowMs ? 'pending' : 'active';
}

const STATE_ORDER = { active: 0, pending: 1, expired: 2 } as const;

/**
 * Alertmanager's order of a silence list: active ones ending soonest first, then pending ones
 * starting soonest, then expired ones, the latest ended first.
 */
export function amSilenceOrder(nowMs: number): (a: Silence, b: Silence) => number {
  return (a, b) => {
    const state = stateOf(a, nowMs);
    const byState = STATE_ORDER[state] - STATE_ORDER[stateOf(b, nowMs)];
    if (byState !== 0) return byState;
    if (state === 'active') return Date.parse(a.ends_at) - Date.parse(b.ends_at);
    if (state === 'pending') return Date.parse(a.starts_at) - Date.parse(b.starts_at);
    return Date.parse(b.ends_at) - Date.parse(a.ends_at);
  };
}

export function toGettableSilence(silence: Silence, nowMs: number): GettableSilence {
  return {
    id: silence.id,
    status: { state: stateOf(silence, nowMs) },
    updatedAt: silence.updated_at,
    matchers: silence.matchers.map(toAmMatcher),
    startsAt: silence.starts_at,
    endsAt: silence.ends_at,
    createdBy: silence.created_by,
    comment: silence.comment,
  };
}

const FILTER_RE = /^\s*\{?\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(?:"((?:[^"\\]|\\.)*)"|([^"\s,}]*))\s*\}?\s*$/;
const KINDS: Record<string, { isRegex: boolean; isEqual: boolean }> = {
  '=': { isRegex: false, isEqual: true },
  '!=': { isRegex: false, isEqual: false },
  '=~': { isRegex: true, isEqual: true },
  '!~': { isRegex: true, isEqual: false },
};

/** A `filter` parameter (`alertname="Foo"`, `env=~"prod.*"`, quotes optional); 400 when it is not one matcher. */
export function parseFilter(text: string): AmMatcher {
  const m = FILTER_RE.exec(text);
  const kind = m?.[2] === undefined ? undefined : KINDS[m[2]];
  if (m === null || m[1] === undefined || kind === undefined) throw errors.badRequest(`bad matcher format: ${text.slice(0, 200)}`);
  // Escapes as Prometheus's matcher parser reads them: \n is a newline; any other escaped character is itself.
  const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)) : (m[4] ?? '');
  return { name: m[1], value, ...kind };
}

/** Whether the silence has, for every filter, a matcher of the same name, kind and value. */
export function matchesFilters(silence: Silence, filters: readonly AmMatcher[]): boolean {
  const own = silence.matchers.map(toAmMatcher);
  return filters.every((f) => own.some((m) => m.name === f.name && m.value === f.value && m.isRegex === f.isRegex && m.isEqual === f.isEqual));
}
