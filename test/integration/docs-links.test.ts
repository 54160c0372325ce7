import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The prose of a page: fenced blocks and inline code left out (their brackets are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lowercased, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = (m[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** `[text](target)` links of a page, external ones (with a scheme) left out. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

describe.each(FILES)('%s', (file) => {
  const markdown = readFileSync(join(ROOT, file), 'utf8');

  it('links only to files that exist, and to headings they have', () => {
    const broken: string[] = [];
    for (const link of relativeLinks(markdown)) {
      const [path = '', anchor] = link.split('#');
      const target = path ? join(ROOT, dirname(file), decodeURIComponent(path)) : join(ROOT, file);
      if (!target.startsWith(ROOT) || !existsSync(target)) broken.push(`${link}: no file ${relative(ROOT, target)}`);
      else if (anchor && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor)) {
        broken.push(`${link}: no heading #${anchor} in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names no page the repository does not have', () => {
    // A page named in the text but not linked (`api-decisions.md reserves …`) must exist too.
    const named = [
      ...prose(markdown)
        .replace(/\[[^\]]*\]\([^)]*\)/g, '')
        .matchAll(/[\w./-]+\.md\b/g),
    ].map((m) => m[0]);
    const missing = named.filter((name) => !existsSync(join(ROOT, dirname(file), name)) && !existsSync(join(ROOT, name)));
    expect(missing).toEqual([]);
  });
});

it('checks the links of every page', () => {
  // A guard for the link pattern itself: the docs link to each other a lot.
  expect(FILES.flatMap((file) => relativeLinks(readFileSync(join(ROOT, file), 'utf8'))).length).toBeGreaterThan(100);
});
