import { parseArgs } from 'node:util';
import { COMMANDS, type CommandName, type CommandSpec, GLOBAL_OPTIONS, type OptionSpec, isCommand, subcommandsOf } from './commands.js';

// test/deploy checks the compose commands against the usage text, read from here.
export { USAGE } from './help.js';

export interface ParsedArgs {
  command: CommandName;
  /** For `help`: the command whose help to print; undefined = sluice's own. */
  topic: CommandName | undefined;
  /** For `help`: a command group (`rules`) whose subcommands to list. */
  group?: string;
  config: string | undefined;
  port: number | undefined;
  host: string | undefined;
  noWorker: boolean;
  /** Every option given, by long name (the remote commands read theirs from here). */
  options: ReadonlyMap<string, string | true>;
  positionals: readonly string[];
}

/** The invocation is wrong (exit 2); the message says what and where to look. */
export class UsageError extends Error {}

type Values = Map<string, string | true>;

/**
 * `sluice <command> [options]`, or `sluice --help|--version`. Each command accepts exactly the
 * options of its row in commands.ts; anything else is a UsageError of our own wording.
 */
export function parseCliArgs(argv: readonly string[]): ParsedArgs {
  const [word] = argv;
  if (word === undefined) return parsed('help');
  if (word.startsWith('-')) return parseGlobal(argv);
  // `sluice rules --help`: a group is not a command, but its help is asked for as one's.
  if (argv.length === 2 && (argv[1] === '--help' || argv[1] === '-h') && !isCommand(word) && subcommandsOf(word).length > 0) {
    return parsed('help', { group: word });
  }
  const { name: first, rest } = commandOf(argv);
  const spec: CommandSpec = COMMANDS[first];
  const { values, positionals } = readOptions(rest, spec.options, first);
  if (values.has('help')) return parsed('help', { topic: first });
  if (first === 'help') return parsed('help', topicOf(positionals));
  const { min, max } = spec.positionals ?? { min: 0, max: 0 };
  if (positionals.length > max) throw new UsageError(`unexpected argument '${positionals[max]}' for '${first}'; see ${helpHint(first)}`);
  if (positionals.length < min) throw new UsageError(`'${first}' needs ${spec.args ?? 'an argument'}; see ${helpHint(first)}`);
  return parsed(first, {
    config: stringValue(values, 'config'),
    port: portValue(values, first),
    host: stringValue(values, 'host'),
    noWorker: values.has('no-worker'),
    options: values,
    positionals,
  });
}

/** The command an invocation names: one word (`serve`) or two (`silence add`). */
function commandOf(argv: readonly string[]): { name: CommandName; rest: readonly string[] } {
  const [first = '', second] = argv;
  if (isCommand(first)) return { name: first, rest: argv.slice(1) };
  const pair = `${first} ${second ?? ''}`;
  if (isCommand(pair)) return { name: pair, rest: argv.slice(2) };
  const subcommands = subcommandsOf(first);
  if (subcommands.length > 0) {
    const what = second === undefined || second.startsWith('-') ? 'needs a subcommand' : `has no subcommand '${second}'`;
    throw new UsageError(`'${first}' ${what}: ${subcommands.join(', ')}; see sluice ${first} --help`);
  }
  throw new UsageError(`unknown command '${first}'; see ${helpHint(undefined)}`);
}

/** Options before any command: only --help (optionally naming a command) and --version. */
function parseGlobal(argv: readonly string[]): ParsedArgs {
  const { values, positionals } = readOptions(argv, GLOBAL_OPTIONS, undefined);
  if (values.has('help')) return parsed('help', topicOf(positionals));
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'; see ${helpHint(undefined)}`);
  return parsed(values.has('version') ? 'version' : 'help');
}

/** What `help X` (or `--help X`) asks about: a command (`silence add`, two words) or a group (`rules`). */
function topicOf(positionals: readonly string[]): { topic?: CommandName; group?: string } {
  if (positionals.length === 0) return {};
  const topic = positionals.join(' ');
  const [one, extra] = positionals;
  if (positionals.length === 1 && one !== undefined && !isCommand(one) && subcommandsOf(one).length > 0) return { group: one };
  if (!isCommand(topic) && one !== undefined && isCommand(one) && extra !== undefined)
    throw new UsageError(`unexpected argument '${extra}'; see ${helpHint(undefined)}`);
  if (!isCommand(topic)) throw new UsageError(`unknown command '${topic}'; see ${helpHint(undefined)}`);
  return { topic };
}

/**
 * node:util's tokenizer, non-strict so that every complaint is ours: an unknown option, a value
 * missing or given to a switch. A value that looks like an option (`--config --port 1`; a lone `-`, stdin, does not) is taken
 * for a forgotten one, as node's strict mode does; `--config=-file` passes it on purpose.
 */
function readOptions(args: readonly string[], specs: readonly OptionSpec[], command: CommandName | undefined) {
  const options = Object.fromEntries(
    specs.map((o) => [o.name, { type: o.value ? ('string' as const) : ('boolean' as const), ...(o.short ? { short: o.short } : {}) }]),
  );
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  const values: Values = new Map();
  const positionals: string[] = [];
  const where = command ? ` for '${command}'` : '';
  // Before any command, an unknown option is most likely a command's, written too early.
  const unknownWhere = command ? where : " (a command's options go after it: sluice <command> [options])";
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const spec = specs.find((o) => o.name === token.name);
    if (!spec) throw new UsageError(`unknown option ${token.rawName}${unknownWhere}; see ${helpHint(command)}`);
    if (!spec.value) {
      if (token.value !== undefined) throw new UsageError(`option --${spec.name} takes no value${where}; see ${helpHint(command)}`);
      values.set(spec.name, true);
    } else if (!token.value || (!token.inlineValue && token.value.startsWith('-') && token.value !== '-')) {
      throw new UsageError(`option --${spec.name} needs a value (--${spec.name} ${spec.value})${where}; see ${helpHint(command)}`);
    } else {
      values.set(spec.name, token.value);
    }
  }
  return { values, positionals };
}

/** An option's value; undefined when absent (or a switch). */
export function stringValue(values: ReadonlyMap<string, string | true>, name: string): string | undefined {
  const value = values.get(name);
  return typeof value === 'string' ? value : undefined;
}

function portValue(values: Values, command: CommandName): number | undefined {
  const text = stringValue(values, 'port');
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`--port must be an integer 0-65535, got "${text}"; see ${helpHint(command)}`);
  return port;
}

function helpHint(command: CommandName | undefined): string {
  return command && command !== 'help' ? `sluice ${command} --help` : 'sluice --help';
}

function parsed(command: CommandName, fields: Partial<Omit<ParsedArgs, 'command'>> = {}): ParsedArgs {
  return { command, topic: undefined, config: undefined, port: undefined, host: undefined, noWorker: false, options: new Map(), positionals: [], ...fields };
}
