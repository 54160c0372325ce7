import { dataOf, type paths } from '@sluice/client';
import { useEffect, useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { ActionNotes, ErrorNote, JsonBlock } from '../components/notices.js';
import { RefreshButton } from '../components/refresh-button.js';
import { controlFor, useAction, useLoad } from '../components/use-load.js';
import type { Session } from '../session.js';

type Evaluation = paths['/v1/rules/evaluate']['post']['responses'][200]['content']['application/json'];

/** The loaded rules with their enabled toggles, and the playground with its per-rule trace. */
export function RulesView({ session }: { session: Session }) {
  const rules = useLoad(() => dataOf(session.client.api.GET('/v1/rules')), [session]);
  const toggle = useAction();
  // A rule applies to every tenant: the API also wants a grant with `*` tenants and namespaces.
  const manage = session.can('rules_manage') && session.coversEveryTenant();
  // A switch shows what was asked at once (a controlled input would otherwise snap back until the list reloads).
  const [wanted, setWanted] = useState<Record<string, boolean>>({});
  useEffect(() => setWanted({}), [rules.data]);
  const setEnabled = (name: string, enabled: boolean) => {
    setWanted((w) => ({ ...w, [name]: enabled }));
    return toggle.run(
      async () => {
        try {
          await dataOf(session.client.api.PUT('/v1/rules/{name}/enabled', { params: { path: { name } }, body: { enabled } }));
        } finally {
          rules.reload();
        }
      },
      `Rule ${name} ${enabled ? 'enabled' : 'disabled'}`,
      name,
    );
  };
  return (
    <section aria-labelledby="rules-title">
      <h2 id="rules-title">Rules</h2>
      <div class="toolbar">
        <RefreshButton load={rules} />
      </div>
      <ErrorNote error={rules.error} />
      <ActionNotes action={toggle} />
      <DataTable
        caption="Rules by priority"
        rows={rules.data?.rules ?? []}
        rowKey={(r) => r.name}
        empty="No rules are loaded."
        state={rules}
        columns={[
          { label: 'Priority', cell: (r) => r.priority },
          { label: 'Name', cell: (r) => <code>{r.name}</code> },
          { label: 'Action', cell: (r) => r.action },
          { label: 'Description', cell: (r) => r.description ?? '' },
          { label: 'Source', cell: (r) => r.source },
          {
            label: 'Enabled',
            cell: (r) => (
              <input
                type="checkbox"
                role="switch"
                aria-checked={wanted[r.name] ?? r.enabled}
                aria-label={`Rule ${r.name} enabled`}
                checked={wanted[r.name] ?? r.enabled}
                {...controlFor(toggle, r.name)}
                disabled={!manage || toggle.busy}
                onChange={(e) => setEnabled(r.name, e.currentTarget.checked)}
              />
            ),
          },
        ]}
      />
      <Playground session={session} />
    </section>
  );
}

const SAMPLE = { namespace: 'payments', tenant: 'acme', provider: 'email', action_type: 'send', payload: '{\n  "to": "ops@example.com"\n}', metadata: '{}' };

function Playground({ session }: { session: Session }) {
  const [input, setInput] = useState(SAMPLE);
  const [result, setResult] = useState<Evaluation | null>(null);
  const action = useAction();
  const field = (name: keyof typeof SAMPLE, label: string) => (
    <label>
      {label}
      <input name={name} value={input[name]} onInput={(e) => setInput({ ...input, [name]: e.currentTarget.value })} />
    </label>
  );
  const evaluate = () =>
    action.run(
      async () => {
        // A new question: the last answer must not stand under this one's error.
        setResult(null);
        const body = {
          namespace: input.namespace,
          tenant: input.tenant,
          provider: input.provider,
          action_type: input.action_type,
          payload: JSON.parse(input.payload) as Record<string, unknown>,
          metadata: JSON.parse(input.metadata) as Record<string, string>,
          evaluate_all: true,
        };
        setResult(await dataOf(session.client.api.POST('/v1/rules/evaluate', { body })));
      },
      undefined,
      'evaluate',
    );
  return (
    <article aria-labelledby="playground-title">
      <h3 id="playground-title">Playground</h3>
      <form
        aria-label="Evaluate an action against the rules"
        onSubmit={(e) => {
          e.preventDefault();
          void evaluate();
        }}
      >
        <div class="filters">
          {field('namespace', 'Namespace')}
          {field('tenant', 'Tenant')}
          {field('provider', 'Provider')}
          {field('action_type', 'Action type')}
        </div>
        <label>
          Payload (JSON)
          <textarea name="payload" rows={4} value={input.payload} onInput={(e) => setInput({ ...input, payload: e.currentTarget.value })} />
        </label>
        <label>
          Metadata (JSON)
          <textarea name="metadata" rows={2} value={input.metadata} onInput={(e) => setInput({ ...input, metadata: e.currentTarget.value })} />
        </label>
        <button type="submit" {...controlFor(action, 'evaluate')}>
          Evaluate
        </button>
      </form>
      <ErrorNote error={action.error} />
      {result && (
        <>
          <p role="status">
            Verdict <strong>{result.verdict}</strong>
            {result.matched_rule ? ` by rule ${result.matched_rule}` : ' (no rule matched)'} — {result.total_rules_evaluated} rules evaluated in{' '}
            {result.evaluation_duration_us} µs
          </p>
          <DataTable
            caption="Evaluation trace"
            rows={result.trace}
            rowKey={(t) => t.rule_name}
            empty="No rule was evaluated."
            state={{ loading: false, error: null }}
            columns={[
              { label: 'Rule', cell: (t) => <code>{t.rule_name}</code> },
              { label: 'Condition', cell: (t) => <code>{t.condition_display}</code> },
              { label: 'Result', cell: (t) => t.result },
              { label: 'Skipped because', cell: (t) => t.skip_reason ?? t.error ?? '' },
              { label: 'µs', cell: (t) => t.evaluation_duration_us },
            ]}
          />
          {result.modified_payload && <JsonBlock label="Modified payload" value={result.modified_payload} />}
        </>
      )}
    </article>
  );
}
