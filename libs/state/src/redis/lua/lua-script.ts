/** A Lua script with its header comment (KEYS/ARGV/returns) inside `lua`. */
export interface LuaScript {
  /** Operation name; the registered command is `<name>_<source hash>` (see ../scripts.ts). */
  name: string;
  numberOfKeys: number;
  readOnly?: boolean;
  lua: string;
}
