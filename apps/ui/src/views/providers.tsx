import { SluiceApiError, dataOf } from '@sluice/client';
import { DataTable } from '../components/data-table.js';
import { ActionNotes, ErrorNote } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { controlFor, useAction, useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

/** `success_rate` is a percent already (0–100), as the spec has it. */
const percent = (rate: number) => `${rate.toFixed(1)}%`;

/** The breaker buttons: operation and title. */
const BREAKER_OPS = [
  ['trip', 'Trip'],
  ['reset', 'Reset'],
] as const;

/** The breaker list of a gateway whose breakers are off (404): none. */
function breakersOff(err: unknown): null {
  if (err instanceof SluiceApiError && err.status === 404) return null;
  throw err;
}

/** Provider health and circuit breakers; admins and operators trip and reset them. */
export function ProvidersView({ session }: { session: Session }) {
  const manage = session.can('circuit_breaker_manage');
  // A breaker is gateway-wide: the API also wants a grant over every tenant, namespace and action type of the provider.
  const mayFlip = (provider: string) => manage && session.coversEveryTenant({ provider });
  const health = useLoad(() => dataOf(session.client.api.GET('/v1/providers/health')), [session]);
  // The breaker list is for admins and operators only (403 to a viewer): ask only when the role may.
  // Breakers off (404): no buttons. Any other failure is said, not taken for "no breakers".
  const breakers = useLoad(async () => (manage ? dataOf(session.client.api.GET('/admin/circuit-breakers')).catch(breakersOff) : null), [session, manage]);
  const change = useAction();
  const flip = (provider: string, op: 'trip' | 'reset') =>
    change.run(
      async () => {
        const path = op === 'trip' ? '/admin/circuit-breakers/{provider}/trip' : '/admin/circuit-breakers/{provider}/reset';
        await dataOf(session.client.api.POST(path, { params: { path: { provider } } }));
        health.reload();
        breakers.reload();
      },
      `${op === 'trip' ? 'Tripped' : 'Reset'} the breaker of ${provider}`,
      `${op} ${provider}`,
    );
  const hasBreaker = new Set(breakers.data?.circuit_breakers.map((b) => b.provider) ?? []);
  return (
    <section aria-labelledby="providers-title">
      <h2 id="providers-title">Providers</h2>
      <div class="toolbar">
        <RefreshButton
          load={{
            loading: health.loading || breakers.loading,
            reload: () => {
              health.reload();
              breakers.reload();
            },
          }}
        />
      </div>
      <ErrorNote error={health.error} />
      <ErrorNote error={breakers.error} />
      <ActionNotes action={change} />
      <DataTable
        caption="Provider health"
        rows={health.data?.providers ?? []}
        rowKey={(p) => p.provider}
        empty="No providers are configured."
        state={health}
        columns={[
          { label: 'Provider', cell: (p) => <code>{p.provider}</code> },
          { label: 'Healthy', cell: (p) => (p.healthy ? 'yes' : <strong class="bad">no</strong>) },
          { label: 'Breaker', cell: (p) => <span class={`breaker ${p.circuit_breaker_state ?? 'none'}`}>{p.circuit_breaker_state ?? '—'}</span> },
          { label: 'Requests', cell: (p) => p.total_requests },
          { label: 'Success', cell: (p) => percent(p.success_rate) },
          { label: 'p50 / p99 ms', cell: (p) => `${p.p50_latency_ms} / ${p.p99_latency_ms}` },
          {
            label: 'Breaker control',
            cell: (p) =>
              mayFlip(p.provider) &&
              hasBreaker.has(p.provider) && (
                <div class="row-actions">
                  {BREAKER_OPS.map(([op, title]) => (
                    <button
                      key={op}
                      type="button"
                      class="secondary"
                      {...controlFor(change, `${op} ${p.provider}`)}
                      onClick={() => flip(p.provider, op)}
                      aria-label={`${title} breaker of ${p.provider}`}
                    >
                      {title}
                    </button>
                  ))}
                </div>
              ),
          },
        ]}
      />
    </section>
  );
}
