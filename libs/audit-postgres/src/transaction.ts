import type { ClientBase, Pool } from 'pg';

/**
 * Runs `work` in one transaction on `client`: committed when it resolves, rolled back when it
 * throws or asks for it (returns `{ rollback: value }`, e.g. a check made under a lock failed).
 */
export async function inTransaction<T>(client: ClientBase, work: () => Promise<T | { rollback: T }>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    if (typeof result === 'object' && result !== null && 'rollback' in result) {
      await client.query('ROLLBACK');
      return result.rollback;
    }
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

/** `inTransaction` on a connection of the pool, given back afterwards. */
export async function inPoolTransaction<T>(pool: Pool, work: (client: ClientBase) => Promise<T | { rollback: T }>): Promise<T> {
  const client = await pool.connect();
  try {
    return await inTransaction(client, () => work(client));
  } finally {
    client.release();
  }
}
