import { createSluiceClient, dataOf, type paths, SluiceApiError, type SluiceClient } from '@sluice/client';

/** What `GET /v1/auth/me` says about the signed-in caller. */
type Identity = paths['/v1/auth/me']['get']['responses'][200]['content']['application/json'];

/** A signed-in session: the client carrying the credential, and who it is. */
export interface Session {
  client: SluiceClient;
  identity: Identity;
  /** Permission names of the caller's role (the API enforces them; the UI hides what they don't allow). */
  can(permission: string): boolean;
  /**
   * Whether one grant spans every tenant and namespace (`*` in both), and with `provider` every
   * action type of that provider too: what the API wants, beside the permission, for gateway-wide
   * changes (rule switches, breakers). A tenant-scoped operator would only get 403s.
   */
  coversEveryTenant(of?: { provider: string }): boolean;
}

type Grant = Identity['grants'][number];

function spansEveryTenant(grant: Grant, provider: string | undefined): boolean {
  const all = (list: string[]) => list.includes('*');
  if (!all(grant.tenants) || !all(grant.namespaces)) return false;
  return provider === undefined || (all(grant.actions) && (all(grant.providers) || grant.providers.includes(provider)));
}

// Kept for the tab only: closing it signs out, and nothing lands in persistent storage.
const STORAGE_KEY = 'sluice.credential';

/** Called when the gateway answers 401 to a signed-in call (a JWT expired or revoked, a key removed). */
type OnUnauthorized = () => void;

function clientFor(credential: string | undefined, onUnauthorized?: OnUnauthorized): SluiceClient {
  const send = async (request: Request) => {
    const response = await fetch(request);
    if (response.status === 401 && !request.url.endsWith('/v1/auth/login')) onUnauthorized?.();
    return response;
  };
  return createSluiceClient({ url: window.location.origin, retries: 1, fetch: send, ...(credential === undefined ? {} : { apiKey: credential }) });
}

async function open(credential: string | undefined, onUnauthorized?: OnUnauthorized): Promise<Session> {
  const client = clientFor(credential, onUnauthorized);
  const identity = await dataOf(client.api.GET('/v1/auth/me'));
  const permissions = new Set(identity.permissions);
  return {
    client,
    identity,
    can: (p) => permissions.has(p),
    coversEveryTenant: (of) => identity.grants.some((g) => spansEveryTenant(g, of?.provider)),
  };
}

/** An API key (or a JWT) as the credential; it is checked at once. */
export async function signInWithKey(key: string, onUnauthorized: OnUnauthorized): Promise<Session> {
  const session = await open(key, onUnauthorized);
  sessionStorage.setItem(STORAGE_KEY, key);
  return session;
}

/** Username and password: exchanged for a JWT, which becomes the credential. */
export async function signInWithPassword(username: string, password: string, onUnauthorized: OnUnauthorized): Promise<Session> {
  const { token } = await dataOf(clientFor(undefined).api.POST('/v1/auth/login', { body: { username, password } }));
  return signInWithKey(token, onUnauthorized);
}

/**
 * The tab's stored credential, else no credential at all (works when the gateway runs without
 * auth); null when the gateway refuses them (401). Any other failure (the gateway unreachable,
 * a 503) is thrown: the stored credential stays, so a blip does not sign anyone out.
 */
export async function resumeSession(onUnauthorized: OnUnauthorized): Promise<Session | null> {
  const stored = sessionStorage.getItem(STORAGE_KEY) ?? undefined;
  try {
    return await open(stored, onUnauthorized);
  } catch (err) {
    if (!(err instanceof SluiceApiError && err.status === 401)) throw err;
    forgetCredential();
    return null;
  }
}

export function forgetCredential(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

export async function signOut(session: Session): Promise<void> {
  forgetCredential();
  if (session.identity.method === 'jwt') await session.client.api.POST('/v1/auth/logout').catch(() => undefined);
}
