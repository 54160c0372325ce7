import { SluiceApiError } from '@sluice/client';
import type { ParsedArgs } from '../args.js';
import { approvalDecide, approvalsList, auditQuery, dispatch, silenceAdd, silenceExpire, silenceExtend, silenceQuery } from './remote-commands.js';
import { outputOf, remoteOf, timeoutOf } from './remote-options.js';

/** The commands that talk to a running gateway. */
export type RemoteCommand =
  | 'dispatch'
  | 'silence add'
  | 'silence query'
  | 'silence expire'
  | 'silence extend'
  | 'audit query'
  | 'approvals list'
  | 'approvals approve'
  | 'approvals reject';

/**
 * Runs one against the gateway: exit 0 when it answered, 1 when it refused (its code and
 * message on stderr; with -o json its error body on stdout too) or could not be reached, or a
 * dispatched (or approved) action failed. Usage errors are thrown (exit 2, index.ts).
 */
export async function runRemote(command: RemoteCommand, args: ParsedArgs): Promise<number> {
  const [id = ''] = args.positionals;
  const decision = command === 'approvals approve' || command === 'approvals reject';
  // A decision goes to its link (no --url, no key): only the output format is read.
  const r = decision ? null : remoteOf(command, args.options, process.env);
  const target = r?.url ?? originOf(id);
  try {
    if (r === null) {
      const verb = command === 'approvals approve' ? 'approve' : 'reject';
      // Approved, but the action then failed: a script must see that nothing was delivered.
      return (await approvalDecide(outputOf(command, args.options), verb, id, timeoutOf(args.options))) ? 0 : 1;
    }
    switch (command) {
      case 'dispatch':
        // The gateway answered, but what it answered was a failure: a script must see it.
        return (await dispatch(r)) ? 0 : 1;
      case 'silence add':
        await silenceAdd(r, args.positionals);
        break;
      case 'silence query':
        await silenceQuery(r);
        break;
      case 'silence expire':
        await silenceExpire(r, id);
        break;
      case 'silence extend':
        await silenceExtend(r, id);
        break;
      case 'audit query':
        await auditQuery(r);
        break;
      case 'approvals list':
        await approvalsList(r);
        break;
    }
    return 0;
  } catch (err) {
    if (err instanceof SluiceApiError) {
      process.stderr.write(`sluice: ${err.code} (${err.status}): ${err.message}${retryHint(err.body)}\n`);
      // With -o json the error body too, where the script reads: its code, details, retry_after.
      if (outputOf(command, args.options) === 'json' && typeof err.body === 'object' && err.body !== null) {
        process.stdout.write(`${JSON.stringify(err.body, null, 2)}\n`);
      }
      return 1;
    }
    // AbortSignal.timeout's: the gateway took the connection and did not answer in time.
    if (err instanceof Error && err.name === 'TimeoutError') {
      process.stderr.write(`sluice: cannot reach ${target}: no answer within ${timeoutOf(args.options)} s (--timeout)\n`);
      return 1;
    }
    // A 2xx that is not JSON: something else answered (a proxy's login page).
    if (err instanceof SyntaxError) {
      process.stderr.write(`sluice: ${target} answered with a body that is not JSON (is something else in between?)\n`);
      return 1;
    }
    // fetch's TypeError: the gateway is not there.
    if (err instanceof TypeError && err.message === 'fetch failed') {
      const cause = (err.cause as { code?: string; message?: string } | undefined) ?? {};
      process.stderr.write(`sluice: cannot reach ${target}: ${cause.code ?? cause.message ?? 'connection failed'}\n`);
      return 1;
    }
    throw err;
  }
}

/** ` (retry after N s)` when the refusal says when to try again. */
function retryHint(body: unknown): string {
  const after = (body as { retry_after?: unknown } | null)?.retry_after;
  return typeof after === 'number' ? ` (retry after ${after} s)` : '';
}

/** The scheme, host and port of a link (the link itself when it is not one). */
function originOf(link: string): string {
  try {
    return new URL(link).origin;
  } catch {
    return link;
  }
}
