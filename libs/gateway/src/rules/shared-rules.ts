import type { StateStore } from '@sluice/state';
import { GLOBAL_SCOPE } from '@sluice/state';

/** Reads every plain value of one kind in the global scope, page by page. */
export async function readAllGlobal(state: StateStore, kind: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let cursor: string | undefined;
  do {
    const page = await state.scan(kind, { ...GLOBAL_SCOPE, ...(cursor ? { cursor } : {}), count: 200 });
    for (const entry of page.entries) out.set(entry.key.id, entry.value);
    cursor = page.cursor ?? undefined;
  } while (cursor);
  return out;
}
