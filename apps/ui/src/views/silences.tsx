import { dataOf } from '@sluice/client';
import { useEffect, useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { ActionNotes, ErrorNote, PageNote, Time } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { controlFor, useAction, useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';
import { type Matcher, silenceMatcher } from '../silence-preview.js';

const OPS = ['equal', 'not_equal', 'regex', 'not_regex'] as const;
const PREVIEW_RECORDS = 200;

/** Silences in force or yet to start (expire, extend) and the form that creates one, previewed against recent actions. */
export function SilencesView({ session }: { session: Session }) {
  const silences = useLoad(() => dataOf(session.client.api.GET('/v1/silences', { params: { query: { limit: 1000 } } })), [session]);
  const change = useAction();
  const manage = session.can('silences_manage');
  const expire = (id: string) =>
    change.run(
      async () => {
        await dataOf(session.client.api.POST('/v1/silences/{id}/expire', { params: { path: { id } } }));
        silences.reload();
      },
      `Expired silence ${id}`,
      `expire ${id}`,
    );
  const extend = (id: string) =>
    change.run(
      async () => {
        await dataOf(session.client.api.POST('/v1/silences/{id}/extend', { params: { path: { id } }, body: { minutes: 60 } }));
        silences.reload();
      },
      `Extended silence ${id} by an hour`,
      `extend ${id}`,
    );
  return (
    <section aria-labelledby="silences-title">
      <h2 id="silences-title">Silences</h2>
      {manage && <SilenceForm session={session} onCreated={silences.reload} />}
      <div class="toolbar">
        <RefreshButton load={silences} />
      </div>
      <ErrorNote error={silences.error} />
      <ActionNotes action={change} />
      <PageNote shown={silences.data?.silences.length} count={silences.data?.count} />
      <DataTable
        caption="Silences active or pending (not started yet)"
        rows={silences.data?.silences ?? []}
        rowKey={(s) => s.id}
        empty="No active or pending silence."
        state={silences}
        columns={[
          { label: 'Tenant', cell: (s) => s.tenant },
          { label: 'Namespace', cell: (s) => s.namespace },
          { label: 'Matchers', cell: (s) => <code>{s.matchers.map((m) => `${m.name}${opSymbol(m.op)}${JSON.stringify(m.value)}`).join(', ')}</code> },
          { label: 'Comment', cell: (s) => s.comment },
          // The list holds silences that have not started (starts_at ahead): they mute nothing yet.
          { label: 'Status', cell: (s) => (s.active ? 'active' : <strong>pending</strong>) },
          { label: 'Starts', cell: (s) => <Time at={s.starts_at} /> },
          { label: 'Ends', cell: (s) => <Time at={s.ends_at} /> },
          { label: 'By', cell: (s) => s.created_by },
          {
            label: 'Change',
            cell: (s) =>
              manage && (
                <div class="row-actions">
                  <button
                    type="button"
                    class="secondary"
                    {...controlFor(change, `extend ${s.id}`)}
                    onClick={() => extend(s.id)}
                    aria-label={`Extend silence ${s.id} by one hour`}
                  >
                    +1 h
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    {...controlFor(change, `expire ${s.id}`)}
                    onClick={() => expire(s.id)}
                    aria-label={`Expire silence ${s.id}`}
                  >
                    Expire
                  </button>
                </div>
              ),
          },
        ]}
      />
    </section>
  );
}

function opSymbol(op: string): string {
  return { equal: '=', not_equal: '!=', regex: '=~', not_regex: '!~' }[op] ?? op;
}

function SilenceForm({ session, onCreated }: { session: Session; onCreated: () => void }) {
  const [scope, setScope] = useState({ namespace: '', tenant: '', comment: '', hours: '1' });
  const [matchers, setMatchers] = useState<Matcher[]>([{ name: '', op: 'equal', value: '' }]);
  const [preview, setPreview] = useState<{ matched: number; scanned: number; sample: string[] } | null>(null);
  const action = useAction();
  // A server's refusal was about the input as it was: any change makes it stale.
  const { clear } = action;
  useEffect(clear, [scope, matchers, clear]);
  const setMatcher = (i: number, m: Partial<Matcher>) => setMatchers((list) => list.map((x, j) => (j === i ? { ...x, ...m } : x)));
  const runPreview = () =>
    action.run(
      async () => {
        setPreview(null);
        const matches = await silenceMatcher(matchers);
        const page = await dataOf(
          session.client.api.GET('/v1/audit', { params: { query: { namespace: scope.namespace, tenant: scope.tenant, limit: PREVIEW_RECORDS } } }),
        );
        const hits = page.records.filter(matches);
        setPreview({ matched: hits.length, scanned: page.records.length, sample: hits.slice(0, 5).map((r) => `${r.action_type} (${r.action_id})`) });
      },
      undefined,
      'preview',
    );
  const create = () =>
    action.run(
      async () => {
        await dataOf(
          session.client.api.POST('/v1/silences', {
            body: {
              namespace: scope.namespace,
              tenant: scope.tenant,
              comment: scope.comment,
              matchers,
              duration_seconds: Math.round(Number(scope.hours) * 3600),
            },
          }),
        );
        setPreview(null);
        onCreated();
      },
      'Silence created',
      'create',
    );
  const text = (name: 'namespace' | 'tenant' | 'comment' | 'hours', label: string, number?: { min: string; step: string }) => (
    <label>
      {label}
      <input
        name={`silence-${name}`}
        required
        {...(number ? { type: 'number', ...number } : {})}
        value={scope[name]}
        onInput={(e) => setScope({ ...scope, [name]: e.currentTarget.value })}
      />
    </label>
  );
  return (
    <form
      aria-label="New silence"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <fieldset>
        <legend>New silence</legend>
        <div class="filters">
          {text('namespace', 'Namespace')}
          {text('tenant', 'Tenant')}
          {text('comment', 'Comment')}
          {text('hours', 'Duration (hours)', { min: '0.01', step: 'any' })}
        </div>
        {matchers.map((m, i) => (
          <fieldset class="filters" key={i} aria-label={`Matcher ${i + 1}`}>
            <label>
              Label
              <input name={`matcher-${i}-name`} required value={m.name} onInput={(e) => setMatcher(i, { name: e.currentTarget.value })} />
            </label>
            <label>
              Operator
              <select name={`matcher-${i}-op`} value={m.op} onChange={(e) => setMatcher(i, { op: e.currentTarget.value as Matcher['op'] })}>
                {OPS.map((op) => (
                  <option key={op} value={op}>
                    {op}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Value
              <input name={`matcher-${i}-value`} value={m.value} onInput={(e) => setMatcher(i, { value: e.currentTarget.value })} />
            </label>
          </fieldset>
        ))}
        <div class="toolbar">
          <button type="button" class="secondary" onClick={() => setMatchers([...matchers, { name: '', op: 'equal', value: '' }])}>
            Add matcher
          </button>
          <button
            type="button"
            class="secondary"
            disabled={!scope.namespace || !scope.tenant || action.busy}
            aria-busy={action.running === 'preview'}
            onClick={runPreview}
          >
            Preview
          </button>
          <button type="submit" {...controlFor(action, 'create')}>
            Create silence
          </button>
        </div>
        {preview && (
          <p role="status" data-testid="silence-preview">
            Would have silenced {preview.matched} of the last {preview.scanned} actions of {scope.namespace}/{scope.tenant}
            {preview.sample.length > 0 && `: ${preview.sample.join(', ')}`} (that tenant only: the silence covers its child tenants too, which the preview does
            not read)
          </p>
        )}
        <ActionNotes action={action} />
      </fieldset>
    </form>
  );
}
