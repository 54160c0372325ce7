import { type ActionInput, type BatchResponse, type DispatchOutcome, dataOf } from '@sluice/client';
import { MAX_SILENCE_SECONDS } from '@sluice/core';
// The module alone: the whole gateway package took ~0.35 s of every remote command's start.
import { fromAmMatcher, parseFilter } from '@sluice/gateway/am-silences';
import { UsageError } from '../args.js';
import { parseJsonOption, readJsonFile } from '../json-input.js';
import { print } from './print.js';
import { cliClient, type Output, type Remote, wholeNumber } from './remote-options.js';

type ItemResult = BatchResponse['results'][number];

/** Why an action of a dispatch did not go through: refused (a batch item) or failed; null when it did. */
function failureOf(res: ItemResult): string | null {
  if (res.status === 'error') return res.error.message;
  return outcomeFailure(res.outcome);
}

/** A failed outcome's code and message; null for any other outcome. */
function outcomeFailure(outcome: DispatchOutcome): string | null {
  return outcome.outcome === 'failed' ? `${outcome.error.code}: ${outcome.error.message}` : null;
}

/** An object, or a list of objects (a batch): anything else in --file is a usage error, not a crash. */
function actionsIn(parsed: unknown): ActionInput | ActionInput[] {
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (Array.isArray(parsed) ? parsed.every(isObject) : isObject(parsed)) return parsed as ActionInput | ActionInput[];
  throw new UsageError('--file must hold an action (a JSON object) or a batch (a list of them)');
}

/**
 * `sluice dispatch`: from --file (an object, or a list: a batch) or the field flags. False when
 * an action failed or was refused (the command then exits 1, its reason on stderr and in the table).
 */
export async function dispatch(r: Remote): Promise<boolean> {
  const file = r.value('file');
  const dryRun = r.flag('dry-run');
  if (file !== undefined) {
    const parsed = actionsIn(readJsonFile(file, '--file'));
    if (Array.isArray(parsed)) {
      const batch = await r.client.dispatchBatch(parsed, { dryRun });
      const { results } = batch;
      print(r.output, batch, () => [
        ['#', 'STATUS', 'OUTCOME', 'ACTION ID', 'ERROR'],
        ...results.map((res, i) => [
          String(i),
          res.status,
          res.status === 'success' ? res.outcome.outcome : '-',
          res.status === 'success' ? res.outcome.action_id : '-',
          failureOf(res) ?? '',
        ]),
      ]);
      const failed = results.filter((res) => failureOf(res) !== null).length;
      if (failed > 0) process.stderr.write(`sluice: ${failed} of ${results.length} actions failed or were refused\n`);
      return failed === 0;
    }
    return printOutcome(r, await r.client.dispatch(parsed, { dryRun }));
  }
  const action = {
    namespace: r.required('namespace'),
    tenant: r.required('tenant'),
    provider: r.required('provider'),
    action_type: r.required('action-type'),
    payload: parseJsonOption(r.value('payload') ?? '{}', '--payload') as Record<string, unknown>,
  };
  return printOutcome(r, await r.client.dispatch(action, { dryRun }));
}

function printOutcome(r: Remote, outcome: DispatchOutcome): boolean {
  print(r.output, outcome, () => [['FIELD', 'VALUE'], ...Object.entries(outcome).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])]);
  const failure = outcomeFailure(outcome);
  if (failure !== null) process.stderr.write(`sluice: the action failed: ${failure}\n`);
  return failure === null;
}

const SPAN_RE = /^(\d+)(s|m|h|d)$/;
const SPAN_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** `sluice silence add MATCHER...`: matchers as `name=value`, `!=`, `=~`, `!~`. */
export async function silenceAdd(r: Remote, matchers: readonly string[]): Promise<void> {
  const span = r.value('duration') ?? '1h';
  const m = SPAN_RE.exec(span);
  const seconds = m === null ? 0 : Number(m[1]) * SPAN_SECONDS[m[2] as keyof typeof SPAN_SECONDS];
  if (!(seconds >= 1 && seconds <= MAX_SILENCE_SECONDS)) {
    throw new UsageError(`--duration must be a number and a unit (90s, 30m, 2h, 1d), from 1s to 365d, got "${span}"`);
  }
  const parsed = matchers.map((text) => {
    try {
      return fromAmMatcher(parseFilter(text));
    } catch {
      throw new UsageError(`not a matcher: "${text}" (name=value, name!=value, name=~regex, name!~regex)`);
    }
  });
  const body = {
    namespace: r.required('namespace'),
    tenant: r.required('tenant'),
    comment: r.required('comment'),
    matchers: parsed,
    duration_seconds: seconds,
  };
  const silence = await dataOf(r.client.api.POST('/v1/silences', { body }));
  printSilences(r, silence, [silence]);
}

export async function silenceQuery(r: Remote): Promise<void> {
  const namespace = r.value('namespace');
  const tenant = r.value('tenant');
  const query = { ...(namespace ? { namespace } : {}), ...(tenant ? { tenant } : {}), include_expired: r.flag('expired') };
  const silences = await everyPage((page) =>
    dataOf(r.client.api.GET('/v1/silences', { params: { query: { ...query, ...page } } })).then((l) => ({ items: l.silences, count: l.count })),
  );
  printSilences(r, { silences, count: silences.length }, silences);
}

export async function silenceExpire(r: Remote, id: string): Promise<void> {
  const silence = await dataOf(r.client.api.POST('/v1/silences/{id}/expire', { params: { path: { id } } }));
  printSilences(r, silence, [silence]);
}

export async function silenceExtend(r: Remote, id: string): Promise<void> {
  const minutes = wholeNumber('minutes', r.required('minutes'), 1, MAX_SILENCE_SECONDS / 60);
  const silence = await dataOf(r.client.api.POST('/v1/silences/{id}/extend', { params: { path: { id } }, body: { minutes } }));
  printSilences(r, silence, [silence]);
}

interface SilenceRow {
  id: string;
  namespace: string;
  tenant: string;
  matchers: readonly { name: string; op?: string; value: string }[];
  ends_at: string;
  active: boolean;
  comment: string;
}

const OP_SIGNS: Record<string, string> = { equal: '=', not_equal: '!=', regex: '=~', not_regex: '!~' };

function printSilences(r: Remote, value: unknown, silences: readonly SilenceRow[]): void {
  print(r.output, value, () => [
    ['ID', 'SCOPE', 'MATCHERS', 'ENDS', 'ACTIVE', 'COMMENT'],
    ...silences.map((s) => [
      s.id,
      `${s.namespace}/${s.tenant}`,
      s.matchers.map((m) => `${m.name}${OP_SIGNS[m.op ?? 'equal'] ?? '='}${JSON.stringify(m.value)}`).join(','),
      s.ends_at,
      String(s.active),
      s.comment,
    ]),
  ]);
}

/** `sluice audit query`: one page, newest first. */
/** `sluice audit query`: one page, newest first; the next one with --cursor (said on stderr under a table). */
export async function auditQuery(r: Remote): Promise<void> {
  const query: Record<string, string | number> = { limit: wholeNumber('limit', r.value('limit') ?? '20', 1, 1000) };
  for (const name of ['namespace', 'tenant', 'provider', 'outcome', 'cursor', 'from', 'to'] as const) {
    const v = r.value(name);
    if (v !== undefined) query[name] = v;
  }
  const actionType = r.value('action-type');
  if (actionType !== undefined) query.action_type = actionType;
  const page = await dataOf(r.client.api.GET('/v1/audit', { params: { query } }));
  print(r.output, page, () => [
    ['DISPATCHED', 'OUTCOME', 'SCOPE', 'PROVIDER', 'ACTION TYPE', 'ACTION ID'],
    ...page.records.map((rec) => [rec.dispatched_at, rec.outcome, `${rec.namespace}/${rec.tenant}`, rec.provider, rec.action_type, rec.action_id]),
  ]);
  if (r.output === 'table' && page.next_cursor) {
    const of = page.total === undefined ? '' : ` of ${page.total}`;
    process.stderr.write(`sluice: ${page.records.length}${of} records shown; the next page: --cursor ${page.next_cursor}\n`);
  }
}

/** `sluice approvals list`. */
export async function approvalsList(r: Remote): Promise<void> {
  const query: Record<string, string> = {};
  for (const name of ['namespace', 'tenant', 'status'] as const) {
    const v = r.value(name);
    if (v !== undefined) query[name] = v;
  }
  const approvals = await everyPage((page) =>
    dataOf(r.client.api.GET('/v1/approvals', { params: { query: { ...query, ...page } } })).then((l) => ({ items: l.approvals, count: l.count })),
  );
  const list = { approvals, count: approvals.length };
  print(r.output, list, () => [
    ['ID', 'STATUS', 'SCOPE', 'RULE', 'ACTION', 'EXPIRES'],
    ...list.approvals.map((a) => [a.id, a.status, `${a.namespace}/${a.tenant}`, a.rule, `${a.action.provider}/${a.action.action_type}`, a.expires_at]),
  ]);
}

const LINK_PATH = /^\/v1\/approvals\/([^/]+)\/([^/]+)\/([^/]+)\/(approve|reject)$/;

/**
 * `sluice approvals approve|reject LINK`: the signed link is the credential (no API key needed).
 * False when the approved action then failed (said on stderr), as for a dispatch.
 */
export async function approvalDecide(output: Output, verb: 'approve' | 'reject', link: string, timeoutSeconds: number): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new UsageError(`not a link: "${link.slice(0, 200)}"`);
  }
  const m = LINK_PATH.exec(url.pathname);
  const sig = url.searchParams.get('sig');
  const expiresAt = url.searchParams.get('expires_at');
  const kid = url.searchParams.get('kid');
  if (m === null || sig === null || expiresAt === null)
    throw new UsageError(`not a signed approval link: ${url.origin}${url.pathname} (…/v1/approvals/<ns>/<tenant>/<id>/${verb}?sig=…&expires_at=…)`);
  if (m[4] !== verb) throw new UsageError(`this is the ${m[4]} link; 'approvals ${verb}' needs the ${verb} link`);
  const client = cliClient(url.origin + url.pathname.slice(0, url.pathname.indexOf('/v1/approvals')), undefined, timeoutSeconds);
  const path = { namespace: decodeURIComponent(m[1] ?? ''), tenant: decodeURIComponent(m[2] ?? ''), id: decodeURIComponent(m[3] ?? '') };
  const params = { path, query: { sig, expires_at: expiresAt, ...(kid !== null ? { kid } : {}) } };
  const decision = await dataOf(
    verb === 'approve'
      ? client.api.POST('/v1/approvals/{namespace}/{tenant}/{id}/approve', { params })
      : client.api.POST('/v1/approvals/{namespace}/{tenant}/{id}/reject', { params }),
  );
  print(output, decision, () => [
    ['ID', 'STATUS', 'OUTCOME'],
    [decision.id, decision.status, decision.outcome?.outcome ?? '-'],
  ]);
  const failure = decision.outcome === null ? null : outcomeFailure(decision.outcome);
  if (failure !== null) process.stderr.write(`sluice: approved, but the action failed: ${failure}\n`);
  return failure === null;
}

/** The largest page a list answers. */
const PAGE = 1000;

/** Every entry of a list that pages by offset: pages of 1,000 until `count` is reached. */
async function everyPage<T>(fetchPage: (page: { limit: number; offset: number }) => Promise<{ items: T[]; count: number }>): Promise<T[]> {
  const all: T[] = [];
  for (;;) {
    const { items, count } = await fetchPage({ limit: PAGE, offset: all.length });
    all.push(...items);
    if (items.length === 0 || all.length >= count) return all;
  }
}
