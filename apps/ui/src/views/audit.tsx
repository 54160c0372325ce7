import { dataOf, type paths } from '@sluice/client';
import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { FilterForm, rfc3339, type FilterValues } from '../components/filter-form.js';
import { ActionNotes, ErrorNote, JsonBlock, Time } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { controlFor, useAction, useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';
import { AUDIT_OUTCOMES } from '../vocabulary.js';

type AuditPage = paths['/v1/audit']['get']['responses'][200]['content']['application/json'];
type AuditRecord = AuditPage['records'][number];
type Verify = paths['/v1/audit/verify']['post']['responses'][200]['content']['application/json'];

const PAGE = 25;

/** Search the trail with every filter, page by cursor, open a record: its hash-chain status and a replay button. */
export function AuditView({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({});
  // The cursors of the pages before this one: "Newer" pops, "Older" pushes.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [selected, setSelected] = useState<AuditRecord | null>(null);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => {
    const { from, to, ...rest } = filters;
    const query = { ...rest, from: rfc3339(from), to: rfc3339(to), limit: PAGE, cursor };
    return dataOf(session.client.api.GET('/v1/audit', { params: { query } }));
  }, [session, filters, cursor]);

  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit</h2>
      <FilterForm
        label="Audit filters"
        fields={[
          { name: 'namespace', label: 'Namespace' },
          { name: 'tenant', label: 'Tenant' },
          { name: 'provider', label: 'Provider' },
          { name: 'action_type', label: 'Action type' },
          { name: 'outcome', label: 'Outcome', options: AUDIT_OUTCOMES },
          { name: 'verdict', label: 'Verdict' },
          { name: 'matched_rule', label: 'Matched rule' },
          { name: 'caller_id', label: 'Caller' },
          { name: 'chain_id', label: 'Chain id' },
          { name: 'trace_id', label: 'Trace id' },
          { name: 'from', label: 'From', type: 'datetime-local' },
          { name: 'to', label: 'To', type: 'datetime-local' },
        ]}
        onApply={(values) => {
          setCursors([undefined]);
          setSelected(null);
          setFilters(values);
        }}
        submitLabel="Search"
      />
      <ErrorNote error={page.error} />
      <p role="status" class="muted">
        {page.loading ? 'Loading…' : page.data?.total !== undefined ? `${page.data.total} matching records` : ''}
      </p>
      <DataTable
        caption="Audit records, newest first"
        rows={page.data?.records ?? []}
        rowKey={(r) => r.id}
        empty="No records match."
        state={page}
        columns={[
          { label: 'Dispatched', cell: (r) => <Time at={r.dispatched_at} /> },
          { label: 'Tenant', cell: (r) => r.tenant },
          { label: 'Namespace', cell: (r) => r.namespace },
          { label: 'Action type', cell: (r) => r.action_type },
          { label: 'Provider', cell: (r) => r.provider },
          { label: 'Outcome', cell: (r) => <span class={`outcome ${r.outcome}`}>{r.outcome}</span> },
          { label: 'Rule', cell: (r) => r.matched_rule ?? '—' },
          {
            label: 'Record',
            cell: (r) => (
              <button type="button" class="link" onClick={() => setSelected(r)} aria-label={`Details of ${r.action_id}`}>
                Details
              </button>
            ),
          },
        ]}
      />
      <nav aria-label="Audit pages" class="toolbar">
        <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Newer
        </button>
        <button
          type="button"
          class="secondary"
          disabled={page.loading || !page.data?.next_cursor}
          onClick={() => setCursors((c) => [...c, page.data?.next_cursor])}
        >
          Older
        </button>
        <RefreshButton load={page} />
      </nav>
      {selected && <RecordDetail key={selected.id} session={session} record={selected} onClose={() => setSelected(null)} />}
    </section>
  );
}

function RecordDetail({ session, record, onClose }: { session: Session; record: AuditRecord; onClose: () => void }) {
  const [verified, setVerified] = useState<Verify | null>(null);
  const [replayed, setReplayed] = useState<string | null>(null);
  const action = useAction();
  const chained = record.sequence_number !== null;
  const verify = () =>
    action.run(
      async () => setVerified(await dataOf(session.client.api.POST('/v1/audit/verify', { body: { namespace: record.namespace, tenant: record.tenant } }))),
      undefined,
      'verify',
    );
  const replay = () =>
    action.run(
      async () => {
        const result = await dataOf(session.client.api.POST('/v1/audit/{action_id}/replay', { params: { path: { action_id: record.action_id } } }));
        setReplayed(
          result.success ? `replayed as ${result.new_action_id}: ${result.outcome ?? 'no outcome'}` : `replay failed: ${result.error ?? 'unknown error'}`,
        );
      },
      undefined,
      'replay',
    );
  return (
    <article aria-labelledby="record-title">
      <header class="toolbar">
        <h3 id="record-title">Record {record.action_id}</h3>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </header>
      <dl class="facts">
        <dt>Hash chain</dt>
        <dd data-testid="chain-status">
          {chained ? `sequence ${record.sequence_number}, hash ${record.record_hash?.slice(0, 16)}…` : 'not chained (compliance mode off)'}
          {verified &&
            (verified.valid ? ` — chain valid (${verified.records_checked} records checked)` : ` — chain BROKEN at sequence ${verified.first_broken_at}`)}
        </dd>
        <dt>Caller</dt>
        <dd>
          {record.caller_id} ({record.auth_method})
        </dd>
        <dt>Duration</dt>
        <dd>{record.duration_ms} ms</dd>
      </dl>
      <div class="toolbar">
        {chained && (
          <button type="button" class="secondary" {...controlFor(action, 'verify')} onClick={verify}>
            Verify chain
          </button>
        )}
        {session.can('dispatch') && (
          <button type="button" {...controlFor(action, 'replay')} onClick={replay}>
            Replay
          </button>
        )}
        {replayed && <span role="status">{replayed}</span>}
      </div>
      <ActionNotes action={action} />
      <JsonBlock label="Record" value={record} />
    </article>
  );
}
