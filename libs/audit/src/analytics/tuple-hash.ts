import { createHash } from 'node:crypto';

/** 46 bits: a rank times 128 (room for a latency bin) stays a safe integer, so scores are exact. */
const RANK_SPAN = 2 ** 46;

export interface TupleHash {
  /** 16 base64url characters, for key ids: short whatever the names. */
  hash: string;
  /** An integer in [0, 2^46) from the same digest, for index scores (distinct per tuple but by chance). */
  rank: number;
}

/** Every dispatch hashes its tuples, and a gateway sees few distinct ones: remember the latest. */
const MEMO_LIMIT = 10_000;
const memo = new Map<string, TupleHash>();

/** SHA-256 over the JSON of the parts (JSON keeps null apart from the string "null"). */
export function tupleHash(parts: readonly (string | null)[]): TupleHash {
  const json = JSON.stringify(parts);
  const known = memo.get(json);
  if (known !== undefined) return known;
  const digest = createHash('sha256').update(json).digest();
  const computed = { hash: digest.toString('base64url').slice(0, 16), rank: digest.readUIntBE(0, 6) % RANK_SPAN };
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(json, computed);
  return computed;
}
