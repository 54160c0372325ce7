import { useState } from 'preact/hooks';
import { ErrorNote } from '../components/notices.js';
import { useAction } from '../components/use-load.js';
import { type Session, signInWithKey, signInWithPassword } from '../session.js';

/** An API key, or a username and password (exchanged for a JWT). */
export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [mode, setMode] = useState<'key' | 'password'>('key');
  const [key, setKey] = useState('');
  const [user, setUser] = useState({ username: '', password: '' });
  const action = useAction();
  const submit = () =>
    action.run(async () => onSignedIn(mode === 'key' ? await signInWithKey(key.trim()) : await signInWithPassword(user.username, user.password)));
  return (
    <main class="container sign-in">
      <article>
        <h1>Sign in to Sluice</h1>
        <div role="tablist" aria-label="Sign-in method" class="toolbar">
          <button type="button" role="tab" aria-selected={mode === 'key'} class={mode === 'key' ? '' : 'secondary'} onClick={() => setMode('key')}>
            API key
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={mode === 'password'}
            class={mode === 'password' ? '' : 'secondary'}
            onClick={() => setMode('password')}
          >
            Username and password
          </button>
        </div>
        <form
          aria-label="Sign in"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          {mode === 'key' ? (
            <label>
              API key
              <input name="api-key" type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
            </label>
          ) : (
            <>
              <label>
                Username
                <input
                  name="username"
                  autoComplete="username"
                  required
                  value={user.username}
                  onInput={(e) => setUser({ ...user, username: e.currentTarget.value })}
                />
              </label>
              <label>
                Password
                <input
                  name="password"
                  type="password"
                  autoComplete="current-password"
                  required
                  value={user.password}
                  onInput={(e) => setUser({ ...user, password: e.currentTarget.value })}
                />
              </label>
            </>
          )}
          <button type="submit" aria-busy={action.busy} disabled={action.busy}>
            Sign in
          </button>
        </form>
        <ErrorNote error={action.error} />
      </article>
    </main>
  );
}
