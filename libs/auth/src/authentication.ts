// `@sluice/auth/authentication`: credentials, password hashes (argon2), tokens (jose) and the
// authenticator. Not in the main entry, so a process with auth disabled never loads argon2 or jose.
export { passwordHashProblem, verifyPassword } from './password-hash.js';
export { CredentialsError, parseCredentials, type ApiKeyCredential, type Credentials, type ParsedCredentials, type UserCredential } from './credentials.js';
export { CredentialStore, type CredentialStoreOptions, type ReloadResult } from './credential-store.js';
export { MAX_TOKEN_LENGTH, TokenService, type IssuedToken, type TokenClaims, type TokenServiceOptions, type TokenSubject } from './token-service.js';
export { RevocationList } from './revocation-list.js';
export { Authenticator, type AuthenticatorDeps } from './authenticator.js';
export { createAuth, type Auth, type AuthDeps, type AuthSettings } from './create-auth.js';
