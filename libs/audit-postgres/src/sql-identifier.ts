import type { ClientBase, Pool } from 'pg';

/** Schema names the config accepts: plain lowercase identifiers, so they never need escaping rules beyond quoting. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A schema name as a quoted SQL identifier; throws on a name SCHEMA_NAME refuses (config validation keeps them out). */
export function quoteSchema(name: string): string {
  if (!SCHEMA_NAME.test(name)) throw new Error(`not a schema name: ${JSON.stringify(name)} (lowercase letters, digits and _, at most 63)`);
  return `"${name}"`;
}

/** Whether the (schema-qualified, quoted) relation exists. */
export async function relationExists(client: Pool | ClientBase, qualifiedName: string): Promise<boolean> {
  const { rows } = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [qualifiedName]);
  return rows[0]?.present === true;
}
