import type { StreamEvent } from '@sluice/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { FilterForm, type FilterValues } from '../components/filter-form.js';
import { ErrorNote, Time } from '../components/notices.js';
import { messageOf } from '../components/use-load.js';
import type { Session } from '../session.js';
import { EVENT_TYPES, OUTCOMES, outcomeName } from '../vocabulary.js';

const KEEP = 200;

type Connection = 'connecting' | 'live' | 'closed';

/** The SSE stream, newest first. Pausing freezes the list (events keep arriving and are shown on resume). */
export function LiveView({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({});
  const [events, setEvents] = useState<StreamEvent[]>([]);
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState<StreamEvent[]>([]);
  const [lagged, setLagged] = useState(0);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [error, setError] = useState<string | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  useEffect(() => {
    const abort = new AbortController();
    setConnection('connecting');
    setError(null);
    (async () => {
      const stream = session.client.stream(filters, { signal: abort.signal, onOpen: () => setConnection('live') });
      for await (const event of stream) {
        if (event.type === 'lagged') {
          setLagged((n) => n + Number(event.data['skipped'] ?? 0));
          continue;
        }
        if (pausedRef.current) setHeld((h) => [event, ...h].slice(0, KEEP));
        else setEvents((list) => [event, ...list].slice(0, KEEP));
      }
    })().then(
      () => !abort.signal.aborted && setConnection('closed'),
      (err: unknown) => {
        if (abort.signal.aborted) return;
        setConnection('closed');
        setError(messageOf(err));
      },
    );
    return () => abort.abort();
  }, [session, filters]);

  const resume = () => {
    setEvents((list) => [...held, ...list].slice(0, KEEP));
    setHeld([]);
    setPaused(false);
  };

  return (
    <section aria-labelledby="live-title">
      <h2 id="live-title">Live</h2>
      <FilterForm
        label="Stream filters"
        fields={[
          { name: 'namespace', label: 'Namespace' },
          { name: 'action_type', label: 'Action type' },
          { name: 'outcome', label: 'Outcome', options: OUTCOMES },
          { name: 'event_type', label: 'Event type', options: EVENT_TYPES },
        ]}
        onApply={(values) => {
          setEvents([]);
          setHeld([]);
          setLagged(0);
          setFilters(values);
        }}
        submitLabel="Filter"
      />
      <div class="toolbar">
        <span role="status" data-connection={connection}>
          {connection === 'live' ? '● connected' : connection === 'connecting' ? 'connecting…' : 'disconnected'}
        </span>
        {lagged > 0 && (
          <span class="badge warn" role="status">
            lagged: {lagged} events missed
          </span>
        )}
        {paused ? (
          <button type="button" onClick={resume}>
            Resume ({held.length} new)
          </button>
        ) : (
          <button type="button" class="secondary" onClick={() => setPaused(true)}>
            Pause
          </button>
        )}
      </div>
      <ErrorNote error={error} />
      <DataTable
        caption="Live events, newest first"
        rows={events}
        rowKey={(e) => e.id ?? String(e.data['timestamp'])}
        empty="Waiting for events…"
        columns={[
          { label: 'Time', cell: (e) => <Time at={e.data['timestamp'] as string} /> },
          { label: 'Event', cell: (e) => e.type },
          { label: 'Namespace', cell: (e) => String(e.data['namespace'] ?? '') },
          { label: 'Tenant', cell: (e) => String(e.data['tenant'] ?? '') },
          { label: 'Action type', cell: (e) => String(e.data['action_type'] ?? '') },
          { label: 'Outcome', cell: (e) => outcomeName(e.data['outcome']) ?? '' },
          { label: 'Action id', cell: (e) => <code>{String(e.data['action_id'] ?? e.data['approval_id'] ?? e.data['chain_id'] ?? '')}</code> },
        ]}
      />
    </section>
  );
}
