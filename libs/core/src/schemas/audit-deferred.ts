import { z } from 'zod';

/** On a dispatch outcome only when its audit record could not be written yet (docs/operations.md, "When Redis is away"). */
export const AuditDeferred = z
  .literal('deferred')
  .optional()
  .describe('"deferred": the audit record is spooled in the process and written when the state backend answers again');
