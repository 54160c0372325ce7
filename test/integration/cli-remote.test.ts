import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { credentialsFile, rawKey, WILDCARD_GRANT } from '../support/credentials.js';
import { rulesDir } from '../support/rules-dir.js';
import { runSluice } from '../support/sluice-process.js';
import { requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Body = Record<string, unknown>;

const EXTERNAL = 'https://sluice.example';
const SLUICE_BIN = fileURLToPath(new URL('../../apps/cli/bin/sluice.js', import.meta.url));
const APPROVAL_RULES = `
rules:
  - { name: wires-need-approval, priority: 1, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, ttl_seconds: 3600 } }
`;

/*
 * The CLI's commands that talk to a running gateway, end to end: the built `sluice` against a
 * real server with authentication on — exit codes, tables for people, JSON for scripts.
 */
describe('sluice dispatch, silence and audit against a gateway', () => {
  let gw: RunningGateway;
  let env: Record<string, string>;

  beforeAll(async () => {
    const { file } = credentialsFile({ keys: [{ name: 'ops', role: 'admin', grants: [WILDCARD_GRANT] }] });
    gw = await startGateway('memory', {
      auth: { enabled: true, file },
      rules: { directory: rulesDir({ 'rules.yaml': APPROVAL_RULES }) },
      server: { external_url: EXTERNAL },
      // Named providers: any other name fails (PROVIDER_NOT_FOUND), as a typo would.
      providers: [{ name: 'email', type: 'noop' }],
    });
    env = { SLUICE_URL: gw.url, SLUICE_API_KEY: rawKey('ops') };
  });
  afterAll(() => gw?.close());

  const sluice = (args: string[], stdin?: string) => runSluice(args, { env, ...(stdin !== undefined ? { stdin } : {}) });
  const json = (stdout: string) => JSON.parse(stdout) as Body;

  it('dispatch: from flags (a table), from a file or stdin (JSON), a list as a batch', async () => {
    const table = await sluice([
      'dispatch',
      '--namespace',
      'payments',
      '--tenant',
      'cli',
      '--provider',
      'email',
      '--action-type',
      'send',
      '--payload',
      '{"to":"a@b.c"}',
    ]);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(/^FIELD +VALUE\noutcome +executed\naction_id +[0-9a-f-]{36}\n/);
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-cli-')), 'action.json');
    writeFileSync(file, JSON.stringify(sampleAction({ tenant: 'cli', id: 'from-file' })));
    const fromFile = await sluice(['dispatch', '-f', file, '-o', 'json', '--dry-run']);
    expect(json(fromFile.stdout)).toMatchObject({ outcome: 'dry_run', action_id: 'from-file' });
    const batch = await sluice(
      ['dispatch', '--file', '-', '--output', 'json'],
      JSON.stringify([sampleAction({ tenant: 'cli' }), sampleAction({ tenant: 'cli' })]),
    );
    expect((json(batch.stdout).results as Body[]).map((r) => r.status)).toEqual(['success', 'success']);
  });

  it('dispatch: an action that failed, or a batch with one, exits 1 with the reason; a file of neither kind is a usage error', async () => {
    const failed = await sluice(['dispatch', '-f', '-'], JSON.stringify(sampleAction({ tenant: 'cli', provider: 'nope' })));
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sluice: the action failed: PROVIDER_NOT_FOUND: /) });
    expect(failed.stdout).toMatch(/^outcome +failed$/m);
    const batch = await sluice(['dispatch', '-f', '-'], JSON.stringify([sampleAction({ tenant: 'cli' }), sampleAction({ tenant: 'cli', provider: 'nope' })]));
    expect(batch).toMatchObject({ code: 1, stderr: 'sluice: 1 of 2 actions failed or were refused\n' });
    expect(batch.stdout).toMatch(/^# +STATUS +OUTCOME +ACTION ID +ERROR\n0 +success +executed +[0-9a-f-]{36} *\n1 +\S+ +\S+ +\S+ +.*nope/);
    for (const body of ['null', '[null]', '"x"']) {
      expect(await sluice(['dispatch', '-f', '-'], body)).toMatchObject({ code: 2, stderr: expect.stringMatching(/--file must hold an action/) });
    }
  });

  it('silence add, query, extend and expire; the silence mutes a dispatch meanwhile', async () => {
    const added = await sluice([
      'silence',
      'add',
      'env=prod',
      'host=~"db-.*"',
      '--namespace',
      'payments',
      '--tenant',
      'cli',
      '--comment',
      'maintenance',
      '-d',
      '2h',
      '-o',
      'json',
    ]);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    const silence = json(added.stdout);
    expect(silence).toMatchObject({
      active: true,
      matchers: [
        { name: 'env', op: 'equal', value: 'prod' },
        { name: 'host', op: 'regex', value: 'db-.*' },
      ],
    });
    const id = silence.id as string;
    const muted = await requestJson('POST', `${gw.url}/v1/dispatch`, sampleAction({ tenant: 'cli', metadata: { labels: { env: 'prod', host: 'db-1' } } }), {
      authorization: `Bearer ${rawKey('ops')}`,
    });
    expect(muted.body).toMatchObject({ outcome: 'suppressed', silence_id: id });

    const query = await sluice(['silence', 'query', '--tenant', 'cli']);
    expect(query.stdout).toMatch(/^ID +SCOPE +MATCHERS +ENDS +ACTIVE +COMMENT\n/);
    expect(query.stdout).toContain(`${id}  payments/cli  env="prod",host=~"db-.*"`);
    const extended = json((await sluice(['silence', 'extend', id, '--minutes', '30', '-o', 'json'])).stdout);
    expect(Date.parse(extended.ends_at as string) - Date.parse(silence.ends_at as string)).toBe(30 * 60_000);
    const expired = await sluice(['silence', 'expire', id, '-o', 'json']);
    expect(json(expired.stdout)).toMatchObject({ id, active: false });
    expect((await sluice(['silence', 'query', '--tenant', 'cli'])).stdout).not.toContain(id);
  });

  it('audit query: the newest records, filtered', async () => {
    const res = await sluice(['audit', 'query', '--tenant', 'cli', '--outcome', 'executed', '-n', '2', '-o', 'json']);
    expect(res.code).toBe(0);
    const records = json(res.stdout).records as Body[];
    expect(records).toHaveLength(2);
    expect(records.every((r) => r.tenant === 'cli' && r.outcome === 'executed')).toBe(true);
    const table = await sluice(['audit', 'query', '--tenant', 'cli', '-n', '1']);
    expect(table.stdout).toMatch(/^DISPATCHED +OUTCOME +SCOPE +PROVIDER +ACTION TYPE +ACTION ID\n\S+ +\S+ +payments\/cli /);
    // The next page: its cursor said on stderr, taken by --cursor; pages never repeat a record.
    const cursor = /--cursor (\S+)\n$/.exec(table.stderr)?.[1];
    expect(cursor, table.stderr).toBeDefined();
    const first = json((await sluice(['audit', 'query', '--tenant', 'cli', '-n', '1', '-o', 'json'])).stdout);
    const next = json((await sluice(['audit', 'query', '--tenant', 'cli', '-n', '1', '--cursor', String(cursor), '-o', 'json'])).stdout);
    expect((next.records as Body[])[0]?.action_id).not.toBe((first.records as Body[])[0]?.action_id);
    const future = json((await sluice(['audit', 'query', '--tenant', 'cli', '--from', '2999-01-01T00:00:00Z', '-o', 'json'])).stdout);
    expect(future.records).toEqual([]);
  });

  it('approvals list, then approve through the signed link (the link is the credential); a decided one is 410', async () => {
    const pending = json((await sluice(['dispatch', '-f', '-', '-o', 'json'], JSON.stringify(sampleAction({ tenant: 'cli', action_type: 'wire' })))).stdout);
    expect(pending).toMatchObject({ outcome: 'pending_approval' });
    const listed = await sluice(['approvals', 'list', '--tenant', 'cli']);
    expect(listed.stdout).toMatch(/^ID +STATUS +SCOPE +RULE +ACTION +EXPIRES\n/);
    expect(listed.stdout).toContain(`${pending.approval_id as string}  pending  payments/cli  wires-need-approval  email/wire`);
    const link = (pending.approve_url as string).replace(EXTERNAL, gw.url);
    expect(await runSluice(['approvals', 'reject', link])).toMatchObject({ code: 2, stderr: expect.stringMatching(/this is the approve link/) });
    const approved = await runSluice(['approvals', 'approve', link, '-o', 'json']);
    expect(approved.code).toBe(0);
    expect(json(approved.stdout)).toMatchObject({ status: 'approved', outcome: { outcome: 'executed' } });
    expect(await runSluice(['approvals', 'approve', link])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sluice: GONE \(410\): /) });
    const closed = `http://127.0.0.1:${await freePort()}`;
    expect(await runSluice(['approvals', 'approve', `${closed}/v1/approvals/payments/cli/x/approve?sig=ab&expires_at=1`])).toMatchObject({
      code: 1,
      stderr: `sluice: cannot reach ${closed}: ECONNREFUSED\n`,
    });
    expect(await runSluice(['approvals', 'approve', `${gw.url}/v1/approvals/payments/cli/x/approve`])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/not a signed approval link/),
    });
  });

  it('approving an action that then fails exits 1 with the reason, as a failed dispatch does', async () => {
    // A provider that does not exist: held for approval first, failed once approved.
    const pending = json(
      (await sluice(['dispatch', '-f', '-', '-o', 'json'], JSON.stringify(sampleAction({ tenant: 'cli', action_type: 'wire', provider: 'nowhere' })))).stdout,
    );
    expect(pending).toMatchObject({ outcome: 'pending_approval' });
    const approved = await runSluice(['approvals', 'approve', (pending.approve_url as string).replace(EXTERNAL, gw.url)]);
    expect(approved).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sluice: approved, but the action failed: PROVIDER_NOT_FOUND: /) });
    expect(approved.stdout).toMatch(/approved +failed/);
  });

  it('with -o json a refusal is on stdout too, as the gateway said it (code, retry_after); a reader that stops early ends it quietly', async () => {
    const refused = await runSluice(['silence', 'query', '-o', 'json'], { env: { SLUICE_URL: gw.url, SLUICE_API_KEY: 'wrong' } });
    expect(refused.code).toBe(1);
    expect(json(refused.stdout)).toEqual({ error: 'invalid API key', code: 'UNAUTHORIZED' });
    // Enough records for more output than a pipe holds, read by something that stops after one chunk (`| head -1`).
    const many = Array.from({ length: 300 }, (_, i) => sampleAction({ tenant: 'piped', payload: { i, filler: 'x'.repeat(1000) } }));
    expect((await requestJson('POST', `${gw.url}/v1/dispatch/batch`, { actions: many }, { authorization: `Bearer ${rawKey('ops')}` })).status).toBe(200);
    const child = spawn(process.execPath, [SLUICE_BIN, 'audit', 'query', '--tenant', 'piped', '-n', '1000', '-o', 'json'], { env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('exit 1 with the code when the gateway refuses or is not there; exit 2 for usage', async () => {
    const refused = await runSluice(['silence', 'query'], { env: { SLUICE_URL: gw.url, SLUICE_API_KEY: 'wrong' } });
    expect(refused).toEqual({ code: 1, stdout: '', stderr: 'sluice: UNAUTHORIZED (401): invalid API key\n' });
    const invalid = await sluice(['silence', 'add', 'env=prod', '--namespace', 'payments', '--tenant', 'cli', '--comment', ' ']);
    expect(invalid).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sluice: VALIDATION_FAILED \(400\): /) });
    const closed = `http://127.0.0.1:${await freePort()}`;
    const away = await runSluice(['audit', 'query', '--url', closed]);
    expect(away).toMatchObject({ code: 1, stderr: `sluice: cannot reach ${closed}: ECONNREFUSED\n` });
    // A gateway that takes the connection and never answers: given up after --timeout, not undici's five minutes.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const hung = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const started = Date.now();
      expect(await runSluice(['audit', 'query', '--url', hung, '--timeout', '1'])).toMatchObject({
        code: 1,
        stderr: `sluice: cannot reach ${hung}: no answer within 1 s (--timeout)\n`,
      });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    expect(await sluice(['audit', 'query', '--timeout', '0'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--timeout must be a whole number from 1 to 3600, got "0"/),
    });
    // Out of range is the CLI's usage error (2), not the gateway's 400 (1); a URL's password is not echoed.
    for (const span of ['0s', '366d', '2w']) {
      expect(await sluice(['silence', 'add', 'env=prod', '--namespace', 'payments', '--tenant', 'cli', '--comment', 'x', '-d', span])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/--duration must be a number and a unit .* from 1s to 365d/),
      });
    }
    expect(await sluice(['audit', 'query', '-n', '1001'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--limit must be a whole number from 1 to 1000/),
    });
    const withPassword = await sluice(['audit', 'query', '--url', 'http://user:s3cret@127.0.0.1:1']);
    expect(withPassword).toMatchObject({ code: 2, stderr: expect.stringMatching(/--url must not hold a user or password/) });
    expect(withPassword.stderr).not.toContain('s3cret');
    expect(await sluice(['silence'])).toMatchObject({
      code: 2,
      stderr: "sluice: 'silence' needs a subcommand: add, query, expire, extend; see sluice silence --help\n",
    });
    expect(await sluice(['silence', 'add', '--comment', 'x'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/'silence add' needs MATCHER\.\.\./) });
    expect(await sluice(['silence', 'add', 'env=prod', '--tenant', 'cli', '--comment', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/needs --namespace/),
    });
    expect(await sluice(['silence', 'add', 'env', '--namespace', 'p', '--tenant', 'cli', '--comment', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/not a matcher: "env"/),
    });
    expect(await sluice(['audit', 'query', '-o', 'yaml'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--output must be table or json/) });
    expect(await sluice(['silence', 'add', '--help'])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Usage: sluice silence add \[options\] MATCHER\.\.\./),
    });
  });
});
