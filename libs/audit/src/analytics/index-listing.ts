import type { StateKey, StateStore } from '@sluice/state';

const PAGE = 5000;

/**
 * Every member of a rollup index, paged by score rather than by offset: each page starts at the
 * last score read, skipping only the entries already read at that score. Rollup members carry
 * (nearly) distinct hash scores, so that skip is ~1 and a listing costs O(members) in the store,
 * where offset paging costs O(members² / page). A member an insert shifted across a page
 * boundary is read twice and kept once.
 */
export async function listMembers(state: StateStore, key: StateKey, page = PAGE): Promise<string[]> {
  const members = new Set<string>();
  let min: number | undefined;
  let tied = 0; // entries at score `min` already read
  for (;;) {
    const entries = await state.indexRange(key, { ...(min !== undefined ? { min } : {}), offset: tied, limit: page });
    for (const entry of entries) members.add(entry.member);
    const last = entries.at(-1);
    if (last === undefined || entries.length < page) return [...members];
    let run = 0;
    while (run < entries.length && entries[entries.length - 1 - run]?.score === last.score) run++;
    tied = last.score === min ? tied + entries.length : run;
    min = last.score;
  }
}
