import { randomUUID } from 'node:crypto';

/** A new random identifier (UUID v4) for actions, records and jobs. */
export function newId(): string {
  return randomUUID();
}
