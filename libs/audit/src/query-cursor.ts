import { errors } from '@sluice/core';
import { isRecordId } from './record-id.js';

/**
 * A query position: the score (dispatched_at ms) and record id of the last entry a page covered;
 * the next page continues strictly older. `s` carries matches still to skip when the scan budget
 * ran out while applying an offset. Wire form: base64url (no padding) of
 * {"v":1,"k":"ts","t":<ms>,"i":"<record id>"}, as the reference implementation's cursors.
 */
export interface CursorPosition {
  t: number;
  i: string;
  s?: number;
}

export function encodeCursor(position: CursorPosition): string {
  const body = { v: 1, k: 'ts', t: position.t, i: position.i, ...(position.s ? { s: position.s } : {}) };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The instants every backend can write as a date: years 0001 to 9999 (PostgreSQL refuses others as RFC 3339 text). */
const MIN_CURSOR_MS = -62135596800000;
const MAX_CURSOR_MS = 253402300799999;

/** Throws a 400 error for anything encodeCursor did not produce. */
export function decodeCursor(cursor: string): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw errors.badRequest('invalid cursor');
  }
  if (typeof parsed !== 'object' || parsed === null) throw errors.badRequest('invalid cursor');
  const { v, k, t, i, s } = parsed as Record<string, unknown>;
  const validSkip = s === undefined || (typeof s === 'number' && Number.isSafeInteger(s) && s >= 0);
  // `t` is an instant every backend can turn into a date: PostgreSQL's query did, and one outside years 1–9999 was a 500.
  const validTime = typeof t === 'number' && Number.isSafeInteger(t) && t >= MIN_CURSOR_MS && t <= MAX_CURSOR_MS;
  if (v !== 1 || k !== 'ts' || !validTime || typeof i !== 'string' || !isRecordId(i) || !validSkip) {
    throw errors.badRequest('invalid cursor');
  }
  return typeof s === 'number' && s > 0 ? { t, i, s } : { t, i };
}
