import { dataOf } from '@sluice/client';
import { ErrorNote, Time } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { messageOf, useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

/**
 * Each quota policy with its current window's usage as a bar. A `*` policy counts each tenant (or
 * namespace) apart, so it has no one usage to show; a usage that cannot be read (the policy
 * deleted meanwhile) says so on its own row rather than blanking the view.
 */
export function QuotasView({ session }: { session: Session }) {
  const quotas = useLoad(async () => {
    const { quotas } = await dataOf(session.client.api.GET('/v1/quotas', { params: { query: { limit: 200 } } }));
    return Promise.all(
      quotas.map(async (q) => {
        if (q.tenant === '*' || q.namespace === '*') return { quota: q, usage: null, note: 'counted for each tenant and namespace apart' };
        const read = session.client.api.GET('/v1/quotas/{id}/usage', { params: { path: { id: q.id } } });
        return dataOf(read).then(
          (usage) => ({ quota: q, usage, note: null }),
          (err: unknown) => ({ quota: q, usage: null, note: `usage not readable: ${messageOf(err)}` }),
        );
      }),
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
        {quotas.data?.map(({ quota, usage, note }) => (
          <li key={quota.id}>
            {usage === null ? (
              <span>
                <strong>{quota.tenant}</strong> / {quota.namespace} — {quota.max_actions} per {quota.window} window ({quota.overage_behavior}
                {quota.enabled ? '' : ', disabled'}): {note}
              </span>
            ) : (
              <label>
                <span>
                  <strong>{quota.tenant}</strong> / {quota.namespace} — {usage.used} of {usage.limit} in the {usage.window} window ({quota.overage_behavior}
                  {quota.enabled ? '' : ', disabled'}), resets <Time at={usage.resets_at} />
                </span>
                <progress value={usage.used} max={usage.limit} aria-label={`Quota ${quota.id}: ${usage.used} of ${usage.limit} used`} />
              </label>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
