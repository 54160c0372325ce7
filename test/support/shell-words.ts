/** Splits a one-line shell command into words, honouring single and double quotes (no escapes, no expansion). */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}

/** The lines of a markdown text's ```sh blocks, in order, with `\`-continued lines joined. */
export function shellBlockLines(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => (m[1] ?? '').replace(/\\\n\s*/g, ' ').split('\n'));
}
