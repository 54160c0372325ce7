import { z } from 'zod';

/** GET /v1/stream filters, AND-ed with each other and with the caller's tenant grants. */
export const StreamQuery = z.object({
  namespace: z.string().min(1).max(256).optional(),
  action_type: z.string().min(1).max(256).optional(),
  outcome: z
    .enum(['executed', 'suppressed', 'failed', 'throttled', 'rerouted', 'deduplicated', 'grouped', 'state_changed', 'pending_approval', 'chain_started'])
    .optional()
    .describe('dispatch events with this outcome only (other event types are dropped)'),
  event_type: z.enum(['action_dispatched', 'group_flushed', 'timeout', 'chain_advanced', 'approval_required', 'approval_resolved']).optional(),
});
export type StreamQuery = z.infer<typeof StreamQuery>;
