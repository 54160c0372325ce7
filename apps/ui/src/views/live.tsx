import type { StreamEvent } from '@sluice/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { FilterForm, type FilterValues } from '../components/filter-form.js';
import { ErrorNote, Time } from '../components/notices.js';
import { messageOf } from '../components/use-load.js';
import { SluiceApiError, SluiceStreamClosed } from '@sluice/client';
import type { Session } from '../session.js';
import { EVENT_TYPES, OUTCOMES, outcomeName } from '../vocabulary.js';

const KEEP = 200;
/** After the stream ends or fails (a replica restarting, a network blip), connect again this much later. */
const RECONNECT_MS = 3000;

type Connection = 'connecting' | 'live' | 'closed';

/**
 * The SSE stream, newest first. Pausing freezes the list (events keep arriving and are shown on
 * resume). A stream that ends or fails is opened again after a few seconds, keeping the list and
 * the held events; what happened meanwhile is in the audit trail (the stream has no replay).
 */
export function LiveView({ session }: { session: Session }) {
  const [filters, setFilters] = useState<FilterValues>({});
  const [events, setEvents] = useState<StreamEvent[]>([]);
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState<StreamEvent[]>([]);
  const [lagged, setLagged] = useState(0);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [error, setError] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  /** The filters the lists were filled under: a reconnect keeps them, new filters start them afresh. */
  const listedFilters = useRef(filters);

  useEffect(() => {
    const abort = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    const reconnectLater = () => {
      retry = setTimeout(() => setAttempt((n) => n + 1), RECONNECT_MS);
    };
    // The lists belong to their filters: cleared when they change, so no event of the old stream
    // lands in them. A reconnect (a replica restarting) keeps them, held events included.
    if (listedFilters.current !== filters) {
      listedFilters.current = filters;
      setEvents([]);
      setHeld([]);
      setLagged(0);
    }
    setConnection('connecting');
    (async () => {
      const opened = () => {
        setConnection('live');
        setError(null);
      };
      const stream = session.client.stream(filters, { signal: abort.signal, onOpen: opened });
      for await (const event of stream) {
        if (event.type === 'lagged') {
          setLagged((n) => n + Number(event.data['skipped'] ?? 0));
          continue;
        }
        if (pausedRef.current) setHeld((h) => [event, ...h].slice(0, KEEP));
        else setEvents((list) => [event, ...list].slice(0, KEEP));
      }
    })().then(
      () => {
        if (abort.signal.aborted) return;
        setConnection('closed');
        reconnectLater();
      },
      (err: unknown) => {
        if (abort.signal.aborted) return;
        setConnection('closed');
        // The gateway ended the stream (a replica shutting down): connect again, nothing to report.
        if (err instanceof SluiceStreamClosed) return reconnectLater();
        setError(messageOf(err));
        // A refusal (bad filter, no permission) stays refused: only a lost connection, 429 or 5xx is tried again.
        const refused = err instanceof SluiceApiError && err.status >= 400 && err.status < 500 && err.status !== 429;
        if (!refused) reconnectLater();
      },
    );
    return () => {
      abort.abort();
      clearTimeout(retry);
    };
  }, [session, filters, attempt]);

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
        onApply={setFilters}
        submitLabel="Filter"
      />
      <div class="toolbar">
        <span data-connection={connection}>{connection === 'live' ? '● connected' : connection === 'connecting' ? 'connecting…' : 'disconnected'}</span>
        {/* Always in the page, so the text that appears in it is announced. */}
        <span role="status" class={lagged > 0 ? 'badge warn' : ''}>
          {lagged > 0 ? `lagged: ${lagged} events missed` : ''}
        </span>
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
        state={{ loading: false, error }}
        columns={[
          { label: 'Time', cell: (e) => <Time at={e.data['timestamp'] as string} /> },
          { label: 'Event', cell: (e) => e.type },
          { label: 'Namespace', cell: (e) => String(e.data['namespace'] ?? '') },
          { label: 'Tenant', cell: (e) => String(e.data['tenant'] ?? '') },
          { label: 'Action type', cell: (e) => String(e.data['action_type'] ?? '') },
          { label: 'Outcome', cell: (e) => outcomeName(e.data['outcome']) ?? '' },
          { label: 'Id', cell: (e) => <code>{eventSubject(e)}</code> },
        ]}
      />
    </section>
  );
}

/** What an event is about: the action, approval or chain; a flushed group's key; a timed-out event's fingerprint. */
function eventSubject(e: StreamEvent): string {
  const d = e.data;
  return String(d['action_id'] ?? d['approval_id'] ?? d['chain_id'] ?? d['group_key'] ?? d['group_id'] ?? d['fingerprint'] ?? '');
}
