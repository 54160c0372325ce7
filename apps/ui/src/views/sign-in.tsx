import { useEffect, useState } from 'preact/hooks';
import { ErrorNote } from '../components/notices.js';
import { useAction } from '../components/use-load.js';
import { type Session, signInWithKey, signInWithPassword } from '../session.js';

/** An API key, or a username and password (exchanged for a JWT). */
export function SignIn({ onSignedIn, onUnauthorized }: { onSignedIn: (session: Session) => void; onUnauthorized: () => void }) {
  const [mode, setMode] = useState<'key' | 'password'>('key');
  const [key, setKey] = useState('');
  const [user, setUser] = useState({ username: '', password: '' });
  const action = useAction();
  // The page that replaced a view (sign-out, an expired session) starts reading at its heading.
  useEffect(() => document.getElementById('sign-in-title')?.focus(), []);
  const submit = () =>
    action.run(async () =>
      onSignedIn(mode === 'key' ? await signInWithKey(key.trim(), onUnauthorized) : await signInWithPassword(user.username, user.password, onUnauthorized)),
    );
  return (
    <main class="container sign-in">
      <article>
        <h1 id="sign-in-title" tabIndex={-1}>
          Sign in to Sluice
        </h1>
        <fieldset class="toolbar">
          <legend>Sign in with</legend>
          <label>
            <input type="radio" name="method" checked={mode === 'key'} onChange={() => setMode('key')} />
            API key
          </label>
          <label>
            <input type="radio" name="method" checked={mode === 'password'} onChange={() => setMode('password')} />
            Username and password
          </label>
        </fieldset>
        <form
          aria-label="Sign in"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          {mode === 'key' ? (
            <label>
              Key
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
          <button type="submit" aria-busy={action.busy}>
            Sign in
          </button>
        </form>
        <ErrorNote error={action.error} />
      </article>
    </main>
  );
}
