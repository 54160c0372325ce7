import { readFileSync, readdirSync } from 'node:fs';
import { loadConfig } from '@sluice/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunnableBlock, runBlock, runnableBlocks } from '../support/doc-examples.js';
import { shellBlockLines } from '../support/shell-words.js';
import { type RunningGateway, startGateway } from '../support/start-gateway.js';

/**
 * Every ```sh block of README.md and docs/*.md marked `<!-- runnable -->` runs with `sh -e`,
 * verbatim, against a gateway started as the marker says (docs/development.md, "Runnable doc
 * blocks"). The blocks of one document that ask for the same settings share one gateway and
 * run in document order, as a reader following the page would run them.
 */
const ROOT = new URL('../../', import.meta.url);
const FILES = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

interface Group {
  name: string;
  env: Record<string, string>;
  blocks: RunnableBlock[];
}

const GROUPS: Group[] = FILES.flatMap((file) => {
  const groups = new Map<string, Group>();
  for (const block of runnableBlocks(readFileSync(new URL(file, ROOT), 'utf8'), file)) {
    const settings = Object.entries(block.env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const key = `${file}${settings ? ` with ${settings}` : ''}`;
    const group = groups.get(key) ?? { name: key, env: block.env, blocks: [] };
    group.blocks.push(block);
    groups.set(key, group);
  }
  return [...groups.values()];
});

it('marks the quick start and the pages a reader follows by pasting', () => {
  const marked = new Set(GROUPS.map((g) => g.blocks[0]?.where.split(':')[0]));
  for (const file of ['README.md', 'docs/dispatch.md', 'docs/audit.md', 'docs/quotas.md', 'docs/rules.md', 'docs/silences.md', 'docs/auth.md']) {
    expect(marked, file).toContain(file);
  }
});

it('runs the CLI as a fresh clone does: npx sluice, never a bare sluice', () => {
  const bare = FILES.flatMap((file) =>
    shellBlockLines(readFileSync(new URL(file, ROOT), 'utf8'))
      .filter((line) => /(?:^|[|;&(]\s*)sluice\s/.test(line.trim()))
      .map((line) => `${file}: ${line.trim()}`),
  );
  expect(bare).toEqual([]);
});

describe.each(GROUPS)('$name', ({ env, blocks }) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // The settings as `NAME=value npx sluice serve` applies them, on the memory backend.
    gw = await startGateway('memory', loadConfig({ env }).config as unknown as Record<string, unknown>);
  });
  afterAll(() => gw.close());

  it.each(blocks)('$where runs verbatim and prints what it shows', async (block) => {
    await runBlock(gw.url, block);
  });
});

describe('the runner', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway('memory');
  });
  afterAll(() => gw.close());

  const block = (script: string, marker = '<!-- runnable -->') => {
    const [only] = runnableBlocks(`text\n\n${marker}\n\`\`\`sh\n${script}\n\`\`\`\n`, 'test.md');
    return only as RunnableBlock;
  };

  it('reads the settings of a marker, quoted as in a shell', () => {
    expect(block('true', `<!-- runnable SLUICE_A__B=1 SLUICE_PROVIDERS='[{name: x, type: log}]' -->`)).toMatchObject({
      where: 'test.md:4',
      env: { SLUICE_A__B: '1', SLUICE_PROVIDERS: '[{name: x, type: log}]' },
    });
    expect(() => runnableBlocks('<!-- runnable -->\n```yaml\na: 1\n```\n', 'test.md')).toThrow(/not directly followed/);
  });

  it('passes a block that prints what it shows, errors it shows included', async () => {
    await runBlock(
      gw.url,
      block(`ID=$(curl -s localhost:8080/v1/dispatch -H 'content-type: application/json' -d '{"namespace":"n","tenant":"t","provider":"p","action_type":"a","payload":{}}' | jq -r .action_id)
curl -s localhost:8080/v1/audit/$ID
# → {"action_id":"$ID","tenant":"t","dispatched_at":"…Z"}
curl -s localhost:8080/v1/audit/nothing-here
# → {"code":"NOT_FOUND"}`),
    );
  });

  it.each([
    ['a command fails', 'false\necho never'],
    ['the output differs from what the block shows', `curl -s localhost:8080/ready\n# → {"status":"draining"}`],
    ['a call answers an error the block does not show', 'curl -s localhost:8080/v1/audit/nothing-here'],
    [
      'a call answers an error before the one the block shows',
      'curl -s localhost:8080/v1/audit/nothing-here\ncurl -s localhost:8080/v1/audit/nor-here\n# → {"code":"NOT_FOUND"}',
    ],
  ])('fails a block when %s', async (_case, script) => {
    await expect(runBlock(gw.url, block(script))).rejects.toThrow();
  });
});
