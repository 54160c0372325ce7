import type { FunctionComponent } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from './components/notices.js';
import { messageOf, UNREACHABLE } from './components/use-load.js';
import { forgetCredential, type Session, resumeSession, signOut } from './session.js';
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

/** Moves keyboard focus to the page's main region (skip link, view change) without touching the hash route. */
function focusMain(): void {
  document.getElementById('main')?.focus();
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [resumeError, setResumeError] = useState<string | null>(null);
  const path = useHashPath();
  // Following the current view's link again shows it afresh (read again, as on a first visit): the hash does not change, so nothing else would.
  const [visit, setVisit] = useState(0);
  // A 401 on any call (a JWT expired or revoked, a key removed): back to the sign-in page.
  const unauthorized = useCallback(() => {
    forgetCredential();
    setSession(null);
  }, []);
  useEffect(() => {
    resumeSession(unauthorized).then(setSession, (err: unknown) => {
      const message = messageOf(err);
      setResumeError(message === UNREACHABLE ? message : `The gateway could not be reached: ${message}`);
      setSession(null);
    });
  }, [unauthorized]);
  const current = VIEWS.find((v) => v.path === path) ?? VIEWS[0]!;
  useEffect(() => {
    document.title = `${current.title} · Sluice`;
  }, [current]);
  // After the first view, a view change puts focus at the top of the new view (a screen reader reads it from there).
  const shownPath = useRef<string | null>(null);
  useEffect(() => {
    if (!session) return;
    if (shownPath.current !== null && shownPath.current !== current.path) focusMain();
    shownPath.current = current.path;
  }, [current, session]);

  if (session === undefined) return <p aria-busy="true">Loading…</p>;
  if (session === null)
    return (
      <>
        <ErrorNote error={resumeError} />
        <SignIn
          onSignedIn={(signedIn) => {
            setSession(signedIn);
            requestAnimationFrame(focusMain);
          }}
          onUnauthorized={unauthorized}
        />
      </>
    );
  const View = current.view;
  return (
    <>
      {/* A button, not an #anchor: the hash is the view's route. */}
      <button type="button" class="skip-link" onClick={focusMain}>
        Skip to content
      </button>
      <header class="app-header">
        <strong class="brand">Sluice</strong>
        <nav aria-label="Views">
          <ul>
            {VIEWS.map((v) => (
              <li key={v.path}>
                <a
                  href={`#/${v.path}`}
                  aria-current={v.path === current.path ? 'page' : undefined}
                  onClick={() => v.path === current.path && setVisit((n) => n + 1)}
                >
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
        <View key={`${current.path}#${visit}`} session={session} />
      </main>
    </>
  );
}
