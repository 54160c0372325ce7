import calculateSlot from 'cluster-key-slot';

/*
 * Redis Cluster runs a multi-key command, script or transaction only when all its keys hash to
 * one slot (else CROSSSLOT), and ioredis sends a pipeline only when all its keys do. Batched
 * reads and writes that span tenants are split here, per slot, keeping their order within each.
 */

/** Items grouped by the slot of their key, in first-seen order of the slots. */
export function groupBySlot<T>(items: readonly T[], keyOf: (item: T) => string): T[][] {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const slot = calculateSlot(keyOf(item));
    let group = groups.get(slot);
    if (group === undefined) {
      group = [];
      groups.set(slot, group);
    }
    group.push(item);
  }
  return [...groups.values()];
}

/** MGET split per slot (one MGET each, sent together), answers in the order of `keys`. */
export async function mgetBySlot(mget: (keys: string[]) => Promise<(string | null)[]>, keys: readonly string[]): Promise<(string | null)[]> {
  const positions = keys.map((key, at) => ({ key, at }));
  const groups = groupBySlot(positions, (p) => p.key);
  const answers = await Promise.all(groups.map((group) => mget(group.map((p) => p.key))));
  const values: (string | null)[] = new Array(keys.length).fill(null);
  groups.forEach((group, g) => {
    group.forEach((p, i) => {
      values[p.at] = answers[g]?.[i] ?? null;
    });
  });
  return values;
}
