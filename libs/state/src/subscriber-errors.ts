/** Default for a subscribe handler that throws: a handler bug must not kill the process or the other handlers. */
export function warnHandlerError(channel: string, err: unknown): void {
  process.emitWarning(`state subscriber for ${channel} threw: ${err instanceof Error ? err.message : String(err)}`);
}
