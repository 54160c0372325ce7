/**
 * How a record is stored: a versioned value holding the record and the scores of the claims its
 * create took (so a delete gives back exactly those, never a claim taken since), or a tombstone.
 */

/** What a deleted record leaves: its version keeps growing, so a stale compare-and-swap never matches again. */
export const TOMBSTONE = '~deleted';

/** The scores of a record's claims: its id, its unique name (if any), its scope's index, the listing of every record. */
export interface ClaimScores {
  id: number;
  unique: number | null;
  scope: number;
  all: number;
}

/** A decoded stored value: live (record may be null when it no longer decodes), or gone. */
export type StoredForm = { kind: 'gone' } | { kind: 'live'; raw: unknown; claims: ClaimScores | null };

const GONE = { kind: 'gone' } as const;

export function encodeStored(record: unknown, claims: ClaimScores): string {
  return JSON.stringify({ c: [claims.id, claims.unique, claims.scope, claims.all], r: record });
}

/** An absent key and a tombstone are both `gone`: no record. */
export function decodeStored(value: string | undefined): StoredForm {
  if (value === undefined || value === TOMBSTONE) return GONE;
  try {
    const parsed = JSON.parse(value) as { c?: unknown; r?: unknown };
    return { kind: 'live', raw: parsed.r, claims: claimScores(parsed.c) };
  } catch {
    return { kind: 'live', raw: undefined, claims: null };
  }
}

function claimScores(c: unknown): ClaimScores | null {
  if (!Array.isArray(c) || c.length !== 4) return null;
  const [id, unique, scope, all] = c as unknown[];
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  return num(id) && (unique === null || num(unique)) && num(scope) && num(all) ? { id, unique, scope, all } : null;
}
