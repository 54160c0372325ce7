import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rulesDir } from '../support/rules-dir.js';
import { runSluice } from '../support/sluice-process.js';
import { sampleAction } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: no-spam, priority: 1, condition: { field: action.payload.subject, contains: spam }, action: { type: suppress, reason: spam } }
  - { name: big-wires, priority: 2, condition: { all: [ { field: action.action_type, eq: wire }, { field: action.payload.amount, gt: 10000 } ] }, action: { type: require_approval } }
`;

function actionFile(action: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-rules-test-')), 'action.json');
  writeFileSync(file, JSON.stringify(action));
  return file;
}

/* `sluice rules lint|test`: the rule files alone, offline, as a CI pipeline runs them. */
describe('sluice rules lint and test (offline)', () => {
  it('lint: exit 0 for good files, 1 listing each problem', async () => {
    const good = rulesDir({ 'rules.yaml': RULES });
    expect(await runSluice(['rules', 'lint', good])).toEqual({ code: 0, stdout: '2 rules, no problems\n', stderr: '' });
    const bad = rulesDir({
      'a.yaml': RULES,
      'b.yaml':
        'rules:\n  - { name: no-spam, priority: 3, condition: { field: action.tenant, eq: x }, action: { type: suppress } }\n  - { name: broken, priority: 4, condition: { field: action.tenant, frobnicate: 1 }, action: { type: suppress } }\n',
    });
    const res = await runSluice(['rules', 'lint', bad, '-o', 'json']);
    expect(res.code).toBe(1);
    const out = JSON.parse(res.stdout) as { rules: string[]; errors: { file: string; rule?: string; message: string }[] };
    expect(out.rules).toEqual(['no-spam', 'big-wires']);
    expect(out.errors.map((e) => `${e.file} ${e.rule}`).sort()).toEqual(['b.yaml broken', 'b.yaml no-spam']);
    expect(out.errors.find((e) => e.rule === 'no-spam')?.message).toMatch(/duplicate rule name "no-spam"/);
  });

  it('test: the verdict, the matched rule and the trace; --expect fails the run on another verdict', async () => {
    const dir = rulesDir({ 'rules.yaml': RULES });
    const wire = actionFile(sampleAction({ action_type: 'wire', payload: { amount: 50000, subject: 'invoice' } }));
    const table = await runSluice(['rules', 'test', dir, '--action', wire]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^RULE +PRIORITY +RESULT +ACTION +CONDITION\nno-spam +1 +not_matched +suppress +.*\nbig-wires +2 +matched +require_approval /);
    expect(table.stdout).toContain('verdict: require_approval (rule big-wires)');
    const json = await runSluice(['rules', 'test', dir, '-a', '-', '-o', 'json', '--expect', 'suppress'], {
      stdin: JSON.stringify(sampleAction({ payload: { subject: 'cheap spam' } })),
    });
    expect(json.code).toBe(0);
    const result = JSON.parse(json.stdout) as { trace: unknown[] };
    expect(result).toMatchObject({ verdict: 'suppress', matched_rule: 'no-spam', has_errors: false });
    expect(result.trace[0]).toMatchObject({ rule_name: 'no-spam', result: 'matched', source: 'yaml:rules.yaml' });
    const wrong = await runSluice(['rules', 'test', dir, '--action', wire, '--expect', 'allow']);
    expect(wrong).toMatchObject({ code: 1, stderr: 'sluice: expected verdict allow, got require_approval\n' });
    const allowed = await runSluice(['rules', 'test', dir, '--action', actionFile(sampleAction()), '--expect', 'allow', '-o', 'json']);
    expect(JSON.parse(allowed.stdout)).toMatchObject({ verdict: 'allow', matched_rule: null });
  });

  it('usage errors exit 2: no --action, an action file that is not an action, an unreadable directory fails the lint', async () => {
    const dir = rulesDir({ 'rules.yaml': RULES });
    expect(await runSluice(['rules', 'test', dir])).toMatchObject({ code: 2, stderr: expect.stringMatching(/needs --action FILE/) });
    expect(await runSluice(['rules', 'test', dir, '--action', actionFile({ tenant: 1 })])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^sluice: --action .*namespace/),
    });
    expect(await runSluice(['rules', 'lint', '/nonexistent-rules-dir'])).toMatchObject({
      code: 1,
      stdout: expect.stringContaining('cannot read the rules directory'),
    });
    expect(await runSluice(['rules'])).toMatchObject({ code: 2, stderr: "sluice: 'rules' needs a subcommand: lint, test; see sluice rules --help\n" });
  });

  it('prints the help of a command group on --help and -h (exit 0): its subcommands', async () => {
    for (const flag of ['--help', '-h']) {
      const res = await runSluice(['rules', flag]);
      expect(res).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout).toMatch(/^Usage: sluice rules <subcommand> \[options\]\n/);
      expect(res.stdout).toMatch(/\n {2}lint +\S/);
      expect(res.stdout).toMatch(/\n {2}test +\S/);
    }
    expect((await runSluice(['silence', '--help'])).stdout).toMatch(/\n {2}add +\S/);
    // Asked the other way round: `help rules`, `--help rules`.
    for (const args of [
      ['help', 'rules'],
      ['--help', 'rules'],
    ]) {
      expect(await runSluice(args)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Usage: sluice rules <subcommand> \[options\]\n/) });
    }
  });
});
