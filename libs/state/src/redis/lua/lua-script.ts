/** A Lua script with its header comment (KEYS/ARGV/returns) inside `lua`. */
export interface LuaScript {
  /** Operation name; the registered command is `<name>_<source hash>` (see ../scripts.ts). */
  name: string;
  numberOfKeys: number;
  /** Calls may pass further keys after the first numberOfKeys; the key count is then sent per call. */
  variadicKeys?: boolean;
  readOnly?: boolean;
  lua: string;
}
