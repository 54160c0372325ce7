import { z } from 'zod';
import { TimeInterval } from './time-intervals.js';

/**
 * What the gateway stores: the response form without `matches_now` (it depends on the time of
 * reading), plus `id`, which is the name (records are keyed by id within their scope).
 */
export const StoredTimeInterval = TimeInterval.omit({ matches_now: true })
  .extend({ id: z.string() })
  .refine((i) => i.id === i.name, { message: 'id must equal name' });
export type StoredTimeInterval = z.infer<typeof StoredTimeInterval>;
