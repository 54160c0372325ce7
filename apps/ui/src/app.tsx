import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Session, resumeSession, signOut } from './session.js';
import { AnalyticsView } from './views/analytics.js';
import { ApprovalsView } from './views/approvals.js';
import { AuditView } from './views/audit.js';
import { ChainsView } from './views/chains.js';
import { EventsView } from './views/events.js';
import { GroupsView } from './views/groups.js';
import { LiveView } from './views/live.js';
import { ProvidersView } from './views/providers.js';
import { QuotasView } from './views/quotas.js';
import { RulesView } from './views/rules.js';
import { SignIn } from './views/sign-in.js';
import { SilencesView } from './views/silences.js';

type View = FunctionComponent<{ session: Session }>;

/** The views in navigation order, each at `#/<path>`. */
const VIEWS: { path: string; title: string; view: View }[] = [
  { path: 'live', title: 'Live', view: LiveView },
  { path: 'audit', title: 'Audit', view: AuditView },
  { path: 'analytics', title: 'Analytics', view: AnalyticsView },
  { path: 'rules', title: 'Rules', view: RulesView },
  { path: 'silences', title: 'Silences', view: SilencesView },
  { path: 'approvals', title: 'Approvals', view: ApprovalsView },
  { path: 'groups', title: 'Groups', view: GroupsView },
  { path: 'events', title: 'Events', view: EventsView },
  { path: 'chains', title: 'Chains', view: ChainsView },
  { path: 'providers', title: 'Providers', view: ProvidersView },
  { path: 'quotas', title: 'Quotas', view: QuotasView },
];

function currentPath(): string {
  const path = window.location.hash.replace(/^#\/?/, '');
  return VIEWS.some((v) => v.path === path) ? path : 'live';
}

function useHashPath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return path;
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const path = useHashPath();
  useEffect(() => {
    void resumeSession().then(setSession);
  }, []);
  const current = VIEWS.find((v) => v.path === path) ?? VIEWS[0]!;
  useEffect(() => {
    document.title = `${current.title} · Sluice`;
  }, [current]);

  if (session === undefined) return <p aria-busy="true">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  const View = current.view;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <strong class="brand">Sluice</strong>
        <nav aria-label="Views">
          <ul>
            {VIEWS.map((v) => (
              <li key={v.path}>
                <a href={`#/${v.path}`} aria-current={v.path === current.path ? 'page' : undefined}>
                  {v.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who" data-testid="identity">
          {session.identity.id} ({session.identity.role})
        </span>
        {session.identity.method !== 'anonymous' && (
          <button type="button" class="secondary outline" onClick={() => void signOut(session).then(() => setSession(null))}>
            Sign out
          </button>
        )}
      </header>
      <main id="main" class="container-fluid" tabIndex={-1}>
        <View key={current.path} session={session} />
      </main>
    </>
  );
}
