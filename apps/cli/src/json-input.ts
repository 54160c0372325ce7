import { readFileSync } from 'node:fs';
import { UsageError } from './args.js';

/** JSON text of an option (`--payload`); a usage error naming it when it does not parse. */
export function parseJsonOption(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The JSON in a file an option names (`-`: stdin); usage errors name the option when it cannot be read or parsed. */
export function readJsonFile(file: string, option: string): unknown {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${option} ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseJsonOption(text, `${option} ${file}`);
}
