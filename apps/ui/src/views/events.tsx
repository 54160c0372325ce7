import { dataOf } from '@sluice/client';
import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { FilterForm, type FilterValues } from '../components/filter-form.js';
import { ErrorNote, Time } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

/** Event lifecycles (state machines) of one namespace and tenant. */
export function EventsView({ session }: { session: Session }) {
  const [scope, setScope] = useState<FilterValues>({});
  const namespace = scope['namespace'];
  const tenant = scope['tenant'];
  const events = useLoad(
    async () =>
      namespace && tenant ? dataOf(session.client.api.GET('/v1/events', { params: { query: { namespace, tenant, status: scope['status'] } } })) : null,
    [session, scope],
  );
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <FilterForm
        label="Event scope"
        fields={[
          { name: 'namespace', label: 'Namespace' },
          { name: 'tenant', label: 'Tenant' },
          { name: 'status', label: 'State' },
        ]}
        onApply={setScope}
        submitLabel="Show"
      />
      <div class="toolbar">
        <RefreshButton load={events} />
      </div>
      <ErrorNote error={events.error} />
      {events.data === null ? (
        <p class="muted">Events are listed per namespace and tenant: name both.</p>
      ) : (
        <DataTable
          caption="Tracked events"
          rows={events.data?.events ?? []}
          rowKey={(e) => e.fingerprint}
          empty="No tracked events."
          state={events}
          columns={[
            { label: 'Fingerprint', cell: (e) => <code>{e.fingerprint}</code> },
            { label: 'State machine', cell: (e) => e.state_machine },
            { label: 'State', cell: (e) => <strong>{e.state}</strong> },
            { label: 'Action type', cell: (e) => e.action_type ?? '' },
            { label: 'Transitions', cell: (e) => e.transition_count },
            { label: 'Updated', cell: (e) => <Time at={e.updated_at} /> },
            { label: 'Times out', cell: (e) => <Time at={e.timeout_at} /> },
          ]}
        />
      )}
    </section>
  );
}
