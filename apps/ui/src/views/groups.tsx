import { dataOf } from '@sluice/client';
import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { FilterForm, type FilterValues } from '../components/filter-form.js';
import { ActionNotes, ErrorNote, Time } from '../components/notices.js';
import { Pager } from '../components/pager.js';
import { RefreshButton } from '../components/refresh-button.js';
import { controlFor, useAction, useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

const STATUSES = ['pending', 'notified', 'resolved'] as const;
/** The API's default page. */
const PAGE = 100;

/** Event groups and when each notifies; an operator can flush one now. */
export function GroupsView({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({});
  const [offset, setOffset] = useState(0);
  const groups = useLoad(
    () =>
      dataOf(
        session.client.api.GET('/v1/groups', {
          params: { query: { ...filters, status: filters['status'] as (typeof STATUSES)[number] | undefined, limit: PAGE, offset } },
        }),
      ),
    [session, filters, offset],
  );
  const flush = useAction();
  const flushNow = (group_key: string) =>
    flush.run(
      async () => {
        await dataOf(session.client.api.DELETE('/v1/groups/{group_key}', { params: { path: { group_key } } }));
        groups.reload();
      },
      `Flushed group ${group_key}`,
      group_key,
    );
  return (
    <section aria-labelledby="groups-title">
      <h2 id="groups-title">Groups</h2>
      <FilterForm
        label="Group filters"
        fields={[
          { name: 'namespace', label: 'Namespace' },
          { name: 'tenant', label: 'Tenant' },
          { name: 'status', label: 'Status', options: STATUSES },
        ]}
        onApply={(values) => {
          setFilters(values);
          setOffset(0);
        }}
      />
      <div class="toolbar">
        <RefreshButton load={groups} />
      </div>
      <ErrorNote error={groups.error} />
      <ActionNotes action={flush} />
      <Pager label="groups" offset={offset} limit={PAGE} shown={groups.data?.groups.length} count={groups.data?.total} onOffset={setOffset} />
      <DataTable
        caption="Event groups"
        rows={groups.data?.groups ?? []}
        rowKey={(g) => g.group_key}
        empty="No groups."
        state={groups}
        columns={[
          { label: 'Group key', cell: (g) => <code>{g.group_key}</code> },
          { label: 'Tenant', cell: (g) => g.tenant },
          { label: 'Namespace', cell: (g) => g.namespace },
          { label: 'State', cell: (g) => g.state },
          { label: 'Events', cell: (g) => g.event_count },
          { label: 'Notifies', cell: (g) => <Time at={g.notify_at} /> },
          {
            label: 'Flush',
            cell: (g) =>
              session.can('dispatch') &&
              g.state === 'pending' && (
                <button
                  type="button"
                  class="secondary"
                  {...controlFor(flush, g.group_key)}
                  onClick={() => flushNow(g.group_key)}
                  aria-label={`Flush group ${g.group_key} now`}
                >
                  Flush now
                </button>
              ),
          },
        ]}
      />
    </section>
  );
}
