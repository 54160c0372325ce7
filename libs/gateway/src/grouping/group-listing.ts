import type { GroupList, GroupListQuery } from '@sluice/core';
import type { Scheduler, StateStore } from '@sluice/state';
import { GROUP_SUMMARY_KIND, type GroupScope } from './group-keys.js';
import { enqueueFlush } from './group-notifier.js';
import { decodeSummary, toListEntry, type StoredSummary } from './group-record.js';

/** Every readable summary in the scope (all tenants when none is given), page by page. */
async function readSummaries(state: StateStore, scope: { namespace?: string | undefined; tenant?: string | undefined }): Promise<StoredSummary[]> {
  const out: StoredSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await state.scan(GROUP_SUMMARY_KIND, {
      ...(scope.namespace !== undefined ? { namespace: scope.namespace } : {}),
      ...(scope.tenant !== undefined ? { tenant: scope.tenant } : {}),
      ...(cursor ? { cursor } : {}),
      count: 200,
    });
    for (const entry of page.entries) {
      const summary = decodeSummary(entry.value);
      if (summary) out.push(summary);
    }
    cursor = page.cursor ?? undefined;
  } while (cursor);
  return out;
}

/** GET /v1/groups: summaries are mirrored atomically with each record, so a listing never contradicts GET by key. */
export async function listGroups(state: StateStore, query: GroupListQuery, visible?: (scope: GroupScope) => boolean): Promise<GroupList> {
  const all = (await readSummaries(state, query))
    .filter((s) => query.status === undefined || s.state === query.status)
    .filter((s) => visible?.(s) ?? true)
    .sort((a, b) => a.due_ms - b.due_ms || (a.group_key < b.group_key ? -1 : a.group_key > b.group_key ? 1 : 0));
  return { total: all.length, groups: all.slice(query.offset, query.offset + query.limit).map(toListEntry) };
}

/**
 * The backstop for a flush job lost with a process that died between writing a group and
 * enqueuing its job: re-enqueues every flush overdue by more than `graceMs`. The deterministic
 * id makes this a no-op for jobs that exist, and the claim makes a late one harmless.
 */
export async function sweepOverdue(state: StateStore, scheduler: Pick<Scheduler, 'enqueue'>, now: number, graceMs: number): Promise<number> {
  const overdue = (await readSummaries(state, {})).filter((s) => s.state !== 'resolved' && s.due_ms <= now - graceMs);
  for (const s of overdue) await enqueueFlush(scheduler, { ...s, notify_at: s.due_ms }, now);
  return overdue.length;
}
