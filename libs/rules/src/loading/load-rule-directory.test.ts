import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadRuleDirectory } from './load-rule-directory.js';
import { NO_RUNTIMES } from '../../test/rule-fixtures.js';

const rule = (name: string, priority = 0) =>
  `  - { name: ${name}, priority: ${priority}, condition: { field: action.tenant, eq: ${name} }, action: { type: suppress } }\n`;

describe('loadRuleDirectory', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-rules-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads .yaml, .yml and .cel files in sorted order, ignoring other files and subdirectories', async () => {
    await writeFile(join(dir, 'b.yml'), `rules:\n${rule('from-b')}`);
    await writeFile(join(dir, 'a.yaml'), `rules:\n${rule('from-a')}`);
    await writeFile(join(dir, 'c.cel'), 'rules:\n  - { name: from-c, expression: "allow()" }\n');
    await writeFile(join(dir, 'notes.txt'), 'rules: [oops]');
    await writeFile(join(dir, 'README.md'), '# rules');
    await mkdir(join(dir, 'nested.yaml'));
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'd.yaml'), `rules:\n${rule('from-sub')}`);

    const { rules, errors } = await loadRuleDirectory(dir, NO_RUNTIMES);
    expect(errors).toEqual([]);
    expect(rules.map((r) => [r.name, r.source])).toEqual([
      ['from-a', { kind: 'yaml', file: 'a.yaml' }],
      ['from-b', { kind: 'yaml', file: 'b.yml' }],
      ['from-c', { kind: 'cel', file: 'c.cel' }],
    ]);
  });

  it('reports bad rules and broken files, and loads everything else', async () => {
    await writeFile(join(dir, '1-good.yaml'), `rules:\n${rule('good-1')}`);
    await writeFile(join(dir, '2-broken.yaml'), 'rules: [ {name: x\n');
    await writeFile(
      join(dir, '3-mixed.yaml'),
      `rules:\n${rule('good-3')}  - { name: bad-3, condition: { field: action.nope, eq: 1 }, action: { type: allow } }\n`,
    );

    const { rules, errors } = await loadRuleDirectory(dir, NO_RUNTIMES);
    expect(rules.map((r) => r.name)).toEqual(['good-1', 'good-3']);
    expect(errors).toEqual([
      { file: '2-broken.yaml', message: expect.stringMatching(/^YAML syntax error/) },
      { file: '3-mixed.yaml', rule: 'bad-3', message: expect.stringMatching(/condition.field: unknown action field "nope"/) },
    ]);
  });

  it('reports a name already loaded from an earlier file as an error of the later file', async () => {
    await writeFile(join(dir, 'a.yaml'), `rules:\n${rule('shared', 1)}`);
    await writeFile(join(dir, 'b.cel'), 'rules:\n  - { name: shared, priority: 2, expression: "allow()" }\n  - { name: other, expression: "allow()" }\n');

    const { rules, errors } = await loadRuleDirectory(dir, NO_RUNTIMES);
    expect(rules.map((r) => [r.name, r.priority])).toEqual([
      ['shared', 1],
      ['other', 0],
    ]);
    expect(errors).toEqual([{ file: 'b.cel', rule: 'shared', message: 'duplicate rule name "shared" (already loaded from a.yaml)' }]);
  });

  it('reports a missing directory instead of throwing', async () => {
    const missing = join(dir, 'absent');
    const result = await loadRuleDirectory(missing, NO_RUNTIMES);
    expect(result.rules).toEqual([]);
    expect(result.errors).toEqual([{ file: missing, message: expect.stringMatching(/cannot read the rules directory: .*ENOENT/) }]);
  });

  it('loads nothing from an empty directory', async () => {
    expect(await loadRuleDirectory(dir, NO_RUNTIMES)).toEqual({ rules: [], errors: [] });
  });
});
