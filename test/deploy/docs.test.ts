import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENTED } from './support/commands.js';
import { loadCompose } from './support/compose.js';
import { shellBlockLines, splitCommand } from '../support/shell-words.js';
import { REPO_ROOT, helm } from './support/helm.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');

/** Command lines of the ```sh blocks (continuations joined), with their trailing comment. */
function shellLines(markdown: string): { command: string; comment: string }[] {
  return shellBlockLines(markdown)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const i = l.search(/\s#\s/);
      return i < 0 ? { command: l, comment: '' } : { command: l.slice(0, i).trim(), comment: l.slice(i).replace(/^\s#\s*/, '') };
    });
}

const lines = shellLines(DOC);
const helmLines = lines.filter((l) => l.command.startsWith('helm '));

describe('docs/deploy.md', () => {
  it('shows the exact commands the deployment tests run', () => {
    for (const command of DOCUMENTED) expect(DOC, command).toContain(command);
  });

  it('has the helm commands this suite runs', () => {
    expect(helmLines.length).toBeGreaterThanOrEqual(8);
  });

  /**
   * Every documented helm command runs: lint/template as written, install/upgrade as the
   * equivalent `helm template` (same release, chart and flags; no cluster needed). A line
   * commented `# fails: <message>` must fail with that message.
   */
  it.each(helmLines.map((l) => [l.command, l.comment] as const))('%s', (command, comment) => {
    const argv = splitCommand(command).slice(1);
    const verb = argv[0];
    if (verb === 'install' || verb === 'upgrade') argv[0] = 'template';
    expect(['lint', 'template', 'install', 'upgrade']).toContain(verb);
    const res = helm(argv);
    if (comment.startsWith('fails:')) {
      expect(res.code, res.stdout).not.toBe(0);
      expect(res.stderr).toContain(comment.slice('fails:'.length).trim());
    } else {
      expect(res.code, res.stderr).toBe(0);
    }
  });

  it('docker compose commands name real services and profiles', () => {
    const compose = loadCompose();
    const composeLines = lines.filter((l) => l.command.startsWith('docker compose'));
    expect(composeLines.length).toBeGreaterThan(0);
    for (const { command } of composeLines) {
      for (const m of command.matchAll(/--profile (\S+)/g)) {
        expect(Object.values(compose.services).some((s) => s.profiles?.includes(m[1] ?? ''))).toBe(true);
      }
      for (const m of command.matchAll(/--scale (\w+)=\d+/g)) expect(compose.services).toHaveProperty(m[1] ?? '');
    }
    for (const m of DOC.matchAll(/`docker compose (?:restart|logs) ([\w ]+)`/g)) {
      for (const svc of (m[1] ?? '').trim().split(' ')) expect(compose.services, svc).toHaveProperty(svc);
    }
  });

  it('every repository path it mentions exists', () => {
    const paths = [...DOC.matchAll(/(?<![\w/.-])((?:deploy|helm|docs|test)\/[\w./-]*[\w/])/g)].map((m) => m[1] ?? '');
    expect(paths.length).toBeGreaterThan(10);
    for (const p of new Set(paths)) expect(existsSync(join(REPO_ROOT, p)), p).toBe(true);
    for (const m of DOC.matchAll(/\]\(([\w.-]+\.md)\)/g)) expect(existsSync(join(REPO_ROOT, 'docs', m[1] ?? '')), m[1]).toBe(true);
  });

  it('is linked from the README', () => {
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toContain('(docs/deploy.md)');
  });
});
