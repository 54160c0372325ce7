import { dataOf } from '@sluice/client';
import { useState } from 'preact/hooks';
import { DagDrawing } from '../components/dag-drawing.js';
import { DataTable } from '../components/data-table.js';
import { FilterForm, type FilterValues } from '../components/filter-form.js';
import { ErrorNote, Time } from '../components/notices.js';
import { Pager } from '../components/pager.js';
import { RefreshButton } from '../components/refresh-button.js';
import { useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

const PAGE = 50;

/** Chain runs, and the graph of the selected one with the path it took. */
export function ChainsView({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({});
  const [selected, setSelected] = useState<string | null>(null);
  const [offset, setOffset] = useState(0);
  const runs = useLoad(
    () => dataOf(session.client.api.GET('/v1/chains', { params: { query: { ...filters, limit: PAGE, offset } } })),
    [session, filters, offset],
  );
  const dag = useLoad(
    async () => (selected ? dataOf(session.client.api.GET('/v1/chains/{id}/dag', { params: { path: { id: selected } } })) : null),
    [session, selected],
  );
  return (
    <section aria-labelledby="chains-title">
      <h2 id="chains-title">Chains</h2>
      <FilterForm
        label="Chain filters"
        fields={[
          { name: 'namespace', label: 'Namespace' },
          { name: 'tenant', label: 'Tenant' },
          { name: 'chain_name', label: 'Chain' },
          { name: 'status', label: 'Status', options: ['running', 'completed', 'failed', 'cancelled'] },
        ]}
        onApply={(values) => {
          setFilters(values);
          setOffset(0);
        }}
      />
      <div class="toolbar">
        <RefreshButton load={runs} />
      </div>
      <ErrorNote error={runs.error ?? dag.error} />
      <Pager label="chain runs" offset={offset} limit={PAGE} shown={runs.data?.chains.length} count={runs.data?.count} onOffset={setOffset} />
      <DataTable
        caption="Chain runs, newest first"
        rows={runs.data?.chains ?? []}
        rowKey={(c) => c.chain_id}
        empty="No chain runs."
        state={runs}
        columns={[
          { label: 'Started', cell: (c) => <Time at={c.started_at} /> },
          { label: 'Chain', cell: (c) => c.chain_name },
          { label: 'Tenant', cell: (c) => c.tenant },
          { label: 'Status', cell: (c) => <strong>{c.status}</strong> },
          { label: 'Step', cell: (c) => `${c.current_step} / ${c.total_steps}` },
          {
            label: 'Graph',
            cell: (c) => (
              <button type="button" class="link" onClick={() => setSelected(c.chain_id)} aria-label={`Graph of chain run ${c.chain_id}`}>
                Show graph
              </button>
            ),
          },
        ]}
      />
      {dag.data && (
        <figure class="dag-scroll">
          <figcaption>
            {dag.data.chain_name} — {dag.data.status}; path: {dag.data.execution_path.join(' → ') || 'not started'}
          </figcaption>
          <DagDrawing
            nodes={dag.data.nodes as { name: string; status?: string; provider?: string }[]}
            edges={dag.data.edges}
            label={`Graph of ${dag.data.chain_name}: steps ${dag.data.nodes.map((n) => String(n['name'])).join(', ')}`}
          />
        </figure>
      )}
    </section>
  );
}
