// `@sluice/auth/authentication`: credentials, password hashes (argon2), tokens (jose) and the
// authenticator. Not in the main entry, so a process with auth disabled never loads argon2 or jose.
export { parseCredentials } from './credentials.js';
export { Authenticator } from './authenticator.js';
