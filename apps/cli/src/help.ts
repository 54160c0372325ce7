import { COMMANDS, type CommandName, type CommandSpec, GLOBAL_OPTIONS, type OptionSpec } from './commands.js';

// Printed from the table the parser reads (commands.ts): every accepted option is listed.

const EXIT_STATUS =
  'Exit status: 0 done; 1 failed while running (e.g. Redis unreachable), refused by the gateway or unable to reach it, a dispatched or approved action that failed, or (rules) files that do not load or a verdict other than --expect; 2 usage or configuration error.';

/** `sluice --help`: the commands, the options before them, the exit statuses. */
function generalHelp(): string {
  const names = Object.keys(COMMANDS) as CommandName[];
  return [
    'Usage: sluice <command> [options]',
    '       sluice --help | --version',
    '',
    'Commands:',
    ...columns(names.map((name) => [name, COMMANDS[name].summary])),
    '',
    'Options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    "Run 'sluice <command> --help' for the options of a command.",
    EXIT_STATUS,
    '',
  ].join('\n');
}

/** `sluice <command> --help`: its usage line, options and environment. */
export function commandHelp(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  return [
    `Usage: sluice ${name} [options]${spec.args ? ` ${spec.args}` : ''}`,
    '',
    spec.summary,
    '',
    'Options:',
    ...optionLines(spec.options),
    ...(spec.env ? ['', 'Environment:', ...columns(spec.env)] : []),
    '',
  ].join('\n');
}

/** `sluice <group> --help` (`rules`, `silence`…): the group's subcommands. */
export function groupHelp(group: string): string {
  const names = (Object.keys(COMMANDS) as CommandName[]).filter((name) => name.startsWith(`${group} `));
  return [
    `Usage: sluice ${group} <subcommand> [options]`,
    '',
    'Subcommands:',
    ...columns(names.map((name) => [name.slice(group.length + 1), COMMANDS[name].summary])),
    '',
    `Run 'sluice ${group} <subcommand> --help' for its options.`,
    '',
  ].join('\n');
}

/** The general help, as one constant (test/deploy reads the command list from it). */
export const USAGE = generalHelp();

function optionLines(options: readonly OptionSpec[]): string[] {
  return columns(options.map((o) => [`${o.short ? `-${o.short}, ` : '    '}--${o.name}${o.value ? ` ${o.value}` : ''}`, o.help]));
}

function columns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length)) + 3;
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`);
}
