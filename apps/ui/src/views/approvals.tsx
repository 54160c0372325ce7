import { dataOf } from '@sluice/client';
import { DataTable } from '../components/data-table.js';
import { ActionNotes, ErrorNote, PageNote, Time } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { controlFor, useAction, useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

/** Pending approvals; admins and operators approve or reject them (a viewer sees the list only). */
export function ApprovalsView({ session }: { session: Session }) {
  // The largest page: the list pages (count says how many wait in all).
  const pending = useLoad(() => dataOf(session.client.api.GET('/v1/approvals', { params: { query: { status: 'pending', limit: 1000 } } })), [session]);
  const decision = useAction();
  const decide = (ref: { namespace: string; tenant: string; id: string }, verb: 'approve' | 'reject') =>
    decision.run(
      async () => {
        // Refreshed whatever the answer: a 410 or 404 means the row is no longer pending either.
        try {
          const decided = await dataOf(
            session.client.api.POST('/v1/approvals/{namespace}/{tenant}/{id}/decision', { params: { path: ref }, body: { decision: verb } }),
          );
          // Approved is not done: the action ran once approved, and may have failed (a breaker open, the provider down).
          const failure = decided.outcome?.outcome === 'failed' ? decided.outcome.error : undefined;
          if (failure) throw new Error(`Approved ${ref.id}, but its action failed: ${failure.code}: ${failure.message}`);
          return decided.outcome?.outcome;
        } finally {
          pending.reload();
        }
      },
      (outcome) => (verb === 'approve' ? `Approved ${ref.id}: ${outcome ?? 'no outcome'}` : `Rejected ${ref.id}`),
      `${verb} ${ref.id}`,
    );
  const mayDecide = session.can('dispatch');
  return (
    <section aria-labelledby="approvals-title">
      <h2 id="approvals-title">Approvals</h2>
      <div class="toolbar">
        <RefreshButton load={pending} />
      </div>
      <ErrorNote error={pending.error} />
      <ActionNotes action={decision} />
      <PageNote shown={pending.data?.approvals.length} count={pending.data?.count} />
      <DataTable
        caption="Pending approvals, oldest first"
        rows={pending.data?.approvals ?? []}
        rowKey={(a) => `${a.namespace}/${a.tenant}/${a.id}`}
        empty="Nothing waits for approval."
        state={pending}
        columns={[
          { label: 'Requested', cell: (a) => <Time at={a.created_at} /> },
          { label: 'Expires', cell: (a) => <Time at={a.expires_at} /> },
          { label: 'Tenant', cell: (a) => a.tenant },
          { label: 'Namespace', cell: (a) => a.namespace },
          { label: 'Action', cell: (a) => `${a.action.action_type} → ${a.action.provider}` },
          { label: 'Rule', cell: (a) => a.rule },
          { label: 'Message', cell: (a) => a.message ?? '' },
          {
            label: 'Payload',
            // What is being approved: the rule's message often says what to check in it.
            cell: (a) => (
              <details>
                <summary aria-label={`Payload of ${a.action.action_type} ${a.id}`}>Show</summary>
                {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling block must take focus to be scrolled from the keyboard */}
                <pre tabIndex={0}>
                  <code>{JSON.stringify({ payload: a.action.payload, metadata: a.action.metadata }, null, 2)}</code>
                </pre>
              </details>
            ),
          },
          {
            label: 'Decision',
            cell: (a) =>
              mayDecide ? (
                <div class="row-actions">
                  <button
                    type="button"
                    {...controlFor(decision, `approve ${a.id}`)}
                    onClick={() => decide(a, 'approve')}
                    aria-label={`Approve ${a.action.action_type} ${a.id}`}
                  >
                    Approve
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    {...controlFor(decision, `reject ${a.id}`)}
                    onClick={() => decide(a, 'reject')}
                    aria-label={`Reject ${a.action.action_type} ${a.id}`}
                  >
                    Reject
                  </button>
                </div>
              ) : (
                <span class="muted">your role cannot decide</span>
              ),
          },
        ]}
      />
    </section>
  );
}
