import { createSluiceClient, dataOf, type paths, type SluiceClient } from '@sluice/client';

/** What `GET /v1/auth/me` says about the signed-in caller. */
type Identity = paths['/v1/auth/me']['get']['responses'][200]['content']['application/json'];

/** A signed-in session: the client carrying the credential, and who it is. */
export interface Session {
  client: SluiceClient;
  identity: Identity;
  /** Permission names of the caller's role (the API enforces them; the UI hides what they don't allow). */
  can(permission: string): boolean;
}

// Kept for the tab only: closing it signs out, and nothing lands in persistent storage.
const STORAGE_KEY = 'sluice.credential';

function clientFor(credential: string | undefined): SluiceClient {
  return createSluiceClient({ url: window.location.origin, retries: 1, ...(credential === undefined ? {} : { apiKey: credential }) });
}

async function open(credential: string | undefined): Promise<Session> {
  const client = clientFor(credential);
  const identity = await dataOf(client.api.GET('/v1/auth/me'));
  const permissions = new Set(identity.permissions);
  return { client, identity, can: (p) => permissions.has(p) };
}

/** An API key (or a JWT) as the credential; it is checked at once. */
export async function signInWithKey(key: string): Promise<Session> {
  const session = await open(key);
  sessionStorage.setItem(STORAGE_KEY, key);
  return session;
}

/** Username and password: exchanged for a JWT, which becomes the credential. */
export async function signInWithPassword(username: string, password: string): Promise<Session> {
  const { token } = await dataOf(clientFor(undefined).api.POST('/v1/auth/login', { body: { username, password } }));
  return signInWithKey(token);
}

/** The tab's stored credential, else no credential at all (works when the gateway runs without auth); null when neither is accepted. */
export async function resumeSession(): Promise<Session | null> {
  const stored = sessionStorage.getItem(STORAGE_KEY) ?? undefined;
  try {
    return await open(stored);
  } catch {
    sessionStorage.removeItem(STORAGE_KEY);
    return null;
  }
}

export async function signOut(session: Session): Promise<void> {
  sessionStorage.removeItem(STORAGE_KEY);
  if (session.identity.method === 'jwt') await session.client.api.POST('/v1/auth/logout').catch(() => undefined);
}
