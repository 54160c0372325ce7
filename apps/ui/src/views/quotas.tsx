import { dataOf } from '@sluice/client';
import { ErrorNote, Time } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

/** Each quota policy with its current window's usage as a bar. */
export function QuotasView({ session }: { session: Session }) {
  const quotas = useLoad(async () => {
    const { quotas } = await dataOf(session.client.api.GET('/v1/quotas', { params: { query: { limit: 200 } } }));
    return Promise.all(
      quotas.map(async (q) => ({ quota: q, usage: await dataOf(session.client.api.GET('/v1/quotas/{id}/usage', { params: { path: { id: q.id } } })) })),
    );
  }, [session]);
  return (
    <section aria-labelledby="quotas-title">
      <h2 id="quotas-title">Quotas</h2>
      <div class="toolbar">
        <RefreshButton load={quotas} />
      </div>
      <ErrorNote error={quotas.error} />
      {quotas.data?.length === 0 && <p class="empty">No quota policies.</p>}
      <ul class="quota-list">
        {quotas.data?.map(({ quota, usage }) => (
          <li key={quota.id}>
            <label>
              <span>
                <strong>{quota.tenant}</strong> / {quota.namespace} — {usage.used} of {usage.limit} in the {usage.window} window ({quota.overage_behavior}
                {quota.enabled ? '' : ', disabled'}), resets <Time at={usage.resets_at} />
              </span>
              <progress value={usage.used} max={usage.limit} aria-label={`Quota ${quota.id}: ${usage.used} of ${usage.limit} used`} />
            </label>
          </li>
        ))}
      </ul>
    </section>
  );
}
