import calculateSlot from 'cluster-key-slot';
import { escapeComponent } from './keys.js';

/** Redis Cluster's hash slots. */
const SLOTS = 16_384;

/**
 * `count` scopes of `namespace` for keys that are one logical thing split into shards (indexes
 * across tenants, logs): shard i's hash tag falls in the middle half of the i-th of `count` equal
 * parts of the slot space. A Cluster whose primaries hold equal runs of slots (as
 * `redis-cli --cluster create` and most managed services split them) then holds an equal number
 * of shards on each primary when `count` is a multiple of the primaries, where names hashed at
 * random would leave one primary with twice another's share. The names are found by trying
 * suffixes in order, so they are the same in every process and every release.
 */
export function spreadScopes(namespace: string, label: string, count: number): { namespace: string; tenant: string }[] {
  const width = SLOTS / count;
  return Array.from({ length: count }, (_, shard) => {
    const low = shard * width + width / 4;
    const high = (shard + 1) * width - width / 4;
    for (let suffix = 0; ; suffix++) {
      const tenant = `#${label}${shard}.${suffix}`;
      const slot = calculateSlot(`{${escapeComponent(namespace)}:${escapeComponent(tenant)}}`);
      if (slot >= low && slot < high) return { namespace, tenant };
    }
  });
}
