/**
 * The little auth needs from a logger; a pino Logger fits. Fields never carry a key, token,
 * password or secret.
 */
export interface AuthLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}
