import { ManualClock } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader } from '../support/credentials.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const T0 = Date.UTC(2026, 2, 2, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

type Body = Record<string, unknown>;

describe.each(BACKENDS)('silences over HTTP (%s)', (backend) => {
  let gw: RunningGateway;
  const clock = new ManualClock(T0);
  const url = (path: string) => `${gw.url}${path}`;
  const silence = (tenant: string, over: Body = {}) =>
    postJson(url('/v1/silences'), {
      namespace: 'payments',
      tenant,
      matchers: [{ name: 'env', value: 'prod' }],
      comment: 'db maintenance',
      duration_seconds: 3600,
      ...over,
    });
  const dispatch = async (tenant: string, labels: Record<string, string>, query = '') =>
    (await postJson(url(`/v1/dispatch${query}`), sampleAction({ tenant, metadata: { labels } }))).body as Body;
  const get = (path: string) => requestJson('GET', url(path));

  beforeAll(async () => {
    gw = await startGateway(backend, {}, { clock });
  });
  afterAll(() => gw.close());

  it('creates a silence (201) that suppresses matching actions with rule null and its id; the audit record keeps the comment', async () => {
    const created = await silence('t-basic');
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      namespace: 'payments',
      tenant: 't-basic',
      matchers: [{ name: 'env', op: 'equal', value: 'prod' }],
      starts_at: iso(clock.now()),
      ends_at: iso(clock.now() + 3_600_000),
      created_by: 'anonymous',
      comment: 'db maintenance',
      created_at: iso(clock.now()),
      updated_at: iso(clock.now()),
      active: true,
    });
    const id = created.body?.id as string;
    const muted = await dispatch('t-basic', { env: 'prod' });
    expect(muted).toEqual({ outcome: 'suppressed', action_id: expect.any(String), rule: null, silence_id: id });
    expect(await dispatch('t-basic', { env: 'dev' })).toMatchObject({ outcome: 'executed' });
    expect(await dispatch('t-basic', {})).toMatchObject({ outcome: 'executed' });
    const audit = await get(`/v1/audit/${muted.action_id as string}`);
    expect(audit.body).toMatchObject({
      outcome: 'suppressed',
      matched_rule: null,
      outcome_details: { rule: null, silence_id: id, silence_comment: 'db maintenance' },
    });
    expect(await get(`/v1/silences/${id}`)).toMatchObject({ status: 200, body: { id, active: true } });
  });

  it('anchors regex matchers: warn.* silences warning, not prewarning', async () => {
    expect((await silence('t-regex', { matchers: [{ name: 'severity', op: 'regex', value: 'warn.*' }] })).status).toBe(201);
    expect(await dispatch('t-regex', { severity: 'warning' })).toMatchObject({ outcome: 'suppressed' });
    expect(await dispatch('t-regex', { severity: 'prewarning' })).toMatchObject({ outcome: 'executed' });
  });

  it('covers child tenants (acme.eu) and not look-alikes (acme-eu) or parents', async () => {
    expect((await silence('acme', { namespace: 'cover' })).status).toBe(201);
    const inCover = async (tenant: string) =>
      (await postJson(url('/v1/dispatch'), sampleAction({ namespace: 'cover', tenant, metadata: { labels: { env: 'prod' } } }))).body as Body;
    expect(await inCover('acme')).toMatchObject({ outcome: 'suppressed' });
    expect(await inCover('acme.eu')).toMatchObject({ outcome: 'suppressed' });
    const child = await inCover('acme.eu.west');
    expect(child).toMatchObject({ outcome: 'suppressed' });
    // The child's record names the parent's silence but not its comment: the child's keys cannot read that silence.
    const childRecord = (await get(`/v1/audit/${child.action_id as string}`)).body as { outcome_details: Record<string, unknown> };
    expect(childRecord.outcome_details).toEqual({ rule: null, silence_id: expect.any(String) });
    expect(await inCover('acme-eu')).toMatchObject({ outcome: 'executed' });
    expect(await inCover('acmeeu')).toMatchObject({ outcome: 'executed' });
    expect((await silence('big.child', { namespace: 'cover' })).status).toBe(201);
    expect(await inCover('big')).toMatchObject({ outcome: 'executed' });
  });

  it('applies over [starts_at, ends_at): not once ends_at is now, and then lists only with include_expired', async () => {
    const created = await silence('t-window', { duration_seconds: 60 });
    const id = created.body?.id as string;
    expect(await dispatch('t-window', { env: 'prod' })).toMatchObject({ outcome: 'suppressed' });
    clock.advance(59_999);
    expect(await dispatch('t-window', { env: 'prod' })).toMatchObject({ outcome: 'suppressed' });
    clock.advance(1);
    expect(await dispatch('t-window', { env: 'prod' })).toMatchObject({ outcome: 'executed' });
    expect((await get(`/v1/silences/${id}`)).body).toMatchObject({ active: false });
    const listed = async (extra: string) => (((await get(`/v1/silences?tenant=t-window${extra}`)).body?.silences as Body[] | undefined) ?? []).map((s) => s.id);
    expect(await listed('')).toEqual([]);
    expect(await listed('&include_expired=true')).toEqual([id]);
    // A silence that starts later does not apply yet, and is listed (it has not expired).
    const later = await silence('t-window', { starts_at: iso(clock.now() + 60_000) });
    expect(later.body).toMatchObject({ active: false });
    expect(await dispatch('t-window', { env: 'prod' })).toMatchObject({ outcome: 'executed' });
    expect(await listed('')).toEqual([later.body?.id]);
  });

  it('lists with namespace and tenant filters as {silences, count}', async () => {
    await silence('t-list', { namespace: 'list-a' });
    await silence('t-list', { namespace: 'list-b' });
    const res = await get('/v1/silences?namespace=list-a');
    expect(res.body).toMatchObject({ count: 1, silences: [{ namespace: 'list-a', tenant: 't-list' }] });
    expect((await get('/v1/silences?tenant=t-list')).body).toMatchObject({ count: 2 });
  });

  it('pages the list with limit and offset; count is every match; a limit out of range is 400', async () => {
    for (let i = 0; i < 3; i++) await silence('t-paged');
    const first = (await get('/v1/silences?tenant=t-paged&limit=2')).body as { silences: { id: string }[]; count: number };
    const rest = (await get('/v1/silences?tenant=t-paged&limit=2&offset=2')).body as { silences: { id: string }[]; count: number };
    expect([first.silences.length, first.count, rest.silences.length, rest.count]).toEqual([2, 3, 1, 3]);
    expect(new Set([...first.silences, ...rest.silences].map((x) => x.id)).size).toBe(3);
    for (const bad of ['limit=0', 'limit=1001', 'offset=-1', 'limit=x']) expect((await get(`/v1/silences?${bad}`)).status).toBe(400);
  });

  it.each([
    [
      'a 257-character regex',
      { matchers: [{ name: 'host', op: 'regex', value: 'a'.repeat(257) }] },
      /matcher host: regular expression is longer than 256 characters/,
    ],
    [
      'an invalid regex',
      {
        matchers: [
          { name: 'env', value: 'x' },
          { name: 'host', op: 'not_regex', value: 'db-(' },
        ],
      },
      /matcher host: invalid regular expression/,
    ],
    ['no matchers', { matchers: [] }, /matchers must NOT have fewer than 1 items/],
    ['an unknown op', { matchers: [{ name: 'env', op: 'like', value: 'x' }] }, /matchers\.0\.op/],
    ['no comment', { comment: '' }, /comment/],
    ['a blank comment', { comment: '   ' }, /comment a comment is required/],
    ['neither ends_at nor duration_seconds', { duration_seconds: undefined }, /either ends_at or duration_seconds must be supplied/],
    [
      'ends_at before starts_at',
      { duration_seconds: undefined, ends_at: iso(T0 + 3_600_000), starts_at: iso(T0 + 7_200_000) },
      /ends_at must be after starts_at/,
    ],
    ['a window already over', { duration_seconds: undefined, starts_at: iso(T0 - 7_200_000), ends_at: iso(T0 - 3_600_000) }, /ends_at must be in the future/],
    ['a past start and a duration already over', { starts_at: iso(T0 - 7_200_000), duration_seconds: 60 }, /ends_at must be in the future/],
  ])('refuses %s with a 400 and creates nothing', async (_name, over, message) => {
    const before = (await get('/v1/silences?include_expired=true')).body?.count;
    const res = await silence('t-bad', over);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(message);
    expect((await get('/v1/silences?include_expired=true')).body?.count).toBe(before);
  });

  it('edits only comment and ends_at: matchers are immutable (400)', async () => {
    const id = (await silence('t-edit')).body?.id as string;
    clock.advance(1000);
    const ends = iso(clock.now() + 7_200_000);
    const edited = await requestJson('PUT', url(`/v1/silences/${id}`), { comment: 'longer window', ends_at: ends });
    expect(edited).toMatchObject({ status: 200, body: { comment: 'longer window', ends_at: ends, updated_at: iso(clock.now()) } });
    const refused = await requestJson('PUT', url(`/v1/silences/${id}`), { matchers: [{ name: 'env', value: 'dev' }] });
    expect(refused.status).toBe(400);
    expect((await get(`/v1/silences/${id}`)).body).toMatchObject({ matchers: [{ name: 'env', op: 'equal', value: 'prod' }], comment: 'longer window' });
    expect((await requestJson('PUT', url(`/v1/silences/${id}`), { ends_at: iso(T0 - 1) })).status).toBe(400);
    // An end already past, though after the start, would backdate the silence: ending it now is an expire.
    const backdated = await requestJson('PUT', url(`/v1/silences/${id}`), { ends_at: iso(clock.now() - 1) });
    expect(backdated).toMatchObject({ status: 400, body: { error: 'ends_at must be in the future; to end a silence now, expire it' } });
    expect((await get(`/v1/silences/${id}`)).body).toMatchObject({ ends_at: ends, active: true });
  });

  it('extends from the current ends_at, not from now; a lapsed silence is not re-armed (409)', async () => {
    const created = await silence('t-extend', { duration_seconds: 600 });
    const id = created.body?.id as string;
    const endsMs = Date.parse(created.body?.ends_at as string);
    clock.advance(300_000);
    const extended = await postJson(url(`/v1/silences/${id}/extend`), { minutes: 30 });
    expect(extended).toMatchObject({ status: 200, body: { ends_at: iso(endsMs + 30 * 60_000), active: true } });
    expect((await postJson(url(`/v1/silences/${id}/extend`), { minutes: 0 })).status).toBe(400);
    clock.advance(3_600_000);
    expect(await postJson(url(`/v1/silences/${id}/extend`), { minutes: 30 })).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
  });

  it('expires at once with POST …/expire and with DELETE (soft: still readable)', async () => {
    const a = (await silence('t-expire')).body?.id as string;
    expect(await dispatch('t-expire', { env: 'prod' })).toMatchObject({ outcome: 'suppressed' });
    const expired = await postJson(url(`/v1/silences/${a}/expire`), {});
    expect(expired).toMatchObject({ status: 200, body: { active: false, ends_at: iso(clock.now()) } });
    expect(await dispatch('t-expire', { env: 'prod' })).toMatchObject({ outcome: 'executed' });
    const b = (await silence('t-expire')).body?.id as string;
    expect((await requestJson('DELETE', url(`/v1/silences/${b}`))).status).toBe(204);
    expect(await dispatch('t-expire', { env: 'prod' })).toMatchObject({ outcome: 'executed' });
    expect((await get(`/v1/silences/${b}`)).body).toMatchObject({ active: false });
    // An edit does not bring an expired or deleted silence back (409, as extend); its comment may change.
    const later = iso(clock.now() + 3_600_000);
    for (const id of [a, b]) {
      expect(await requestJson('PUT', url(`/v1/silences/${id}`), { ends_at: later })).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
      expect(await requestJson('PUT', url(`/v1/silences/${id}`), { comment: 'post-mortem note' })).toMatchObject({ status: 200, body: { active: false } });
    }
    expect(await dispatch('t-expire', { env: 'prod' })).toMatchObject({ outcome: 'executed' });
    expect((await get('/v1/silences?tenant=t-expire&include_expired=true')).body).toMatchObject({ count: 2 });
    expect(await requestJson('DELETE', url('/v1/silences/no-such-silence'))).toMatchObject({
      status: 404,
      body: { error: 'silence not found: no-such-silence' },
    });
  });

  it('reports the silence in a dry run and in the playground, changing nothing', async () => {
    const id = (await silence('t-dry')).body?.id as string;
    const dry = await dispatch('t-dry', { env: 'prod' }, '?dry_run=true');
    expect(dry).toMatchObject({ outcome: 'dry_run', verdict: 'allow', silence_id: id });
    expect((await get(`/v1/audit/${dry.action_id as string}`)).status).toBe(404);
    const played = await postJson(url('/v1/rules/evaluate'), { ...sampleAction({ tenant: 't-dry.child' }), metadata: { labels: { env: 'prod' } } });
    expect(played.body).toMatchObject({ verdict: 'allow', muted_by: { silence_id: id } });
    const clear = await postJson(url('/v1/rules/evaluate'), { ...sampleAction({ tenant: 't-dry' }), metadata: { labels: { env: 'dev' } } });
    expect(clear.body).toMatchObject({ muted_by: null });
  });
});

describe.each(BACKENDS)('silences and grants (%s)', (backend) => {
  let gw: RunningGateway;
  const acme = { tenants: ['acme'], namespaces: ['payments'], actions: ['*'] };
  beforeAll(async () => {
    const { file } = credentialsFile({
      keys: [
        { name: 'root', role: 'admin', grants: [{ tenants: ['*'], namespaces: ['*'], actions: ['*'] }] },
        { name: 'acme-op', role: 'operator', grants: [acme] },
        { name: 'acme-viewer', role: 'viewer', grants: [acme] },
      ],
    });
    gw = await startGateway(backend, { auth: { enabled: true, file } });
  });
  afterAll(() => gw.close());

  const create = (caller: string, namespace: string, tenant: string) =>
    postJson(`${gw.url}/v1/silences`, { namespace, tenant, matchers: [{ name: 'env', value: 'prod' }], comment: 'c', duration_seconds: 60 }, keyHeader(caller));

  it('refuses a silence in a namespace or tenant the grants do not cover (403), and to a viewer', async () => {
    expect(await create('acme-op', 'billing', 'acme')).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    expect((await create('acme-op', 'payments', 'globex')).status).toBe(403);
    expect((await create('acme-viewer', 'payments', 'acme')).status).toBe(403);
    const mine = await create('acme-op', 'payments', 'acme.eu');
    expect(mine).toMatchObject({ status: 201, body: { created_by: 'acme-op' } });
  });

  it('scopes lists to a single-tenant caller, and guards reads and changes of other tenants’ silences', async () => {
    const theirs = (await create('root', 'payments', 'globex')).body?.id as string;
    const list = await requestJson('GET', `${gw.url}/v1/silences`, undefined, keyHeader('acme-viewer'));
    expect(((list.body?.silences as Body[] | undefined) ?? []).map((s) => s.tenant)).not.toContain('globex');
    expect((await requestJson('GET', `${gw.url}/v1/silences?tenant=globex`, undefined, keyHeader('acme-viewer'))).status).toBe(403);
    // By id, another tenant's silence is not found (a 403 would say it exists there), as an unknown id.
    expect(await requestJson('GET', `${gw.url}/v1/silences/${theirs}`, undefined, keyHeader('acme-viewer'))).toEqual({
      status: 404,
      headers: expect.anything(),
      body: { code: 'NOT_FOUND', error: `silence not found: ${theirs}` },
    });
    expect((await postJson(`${gw.url}/v1/silences/${theirs}/expire`, {}, keyHeader('acme-op'))).status).toBe(404);
    expect((await requestJson('PUT', `${gw.url}/v1/silences/${theirs}`, { comment: 'x' }, keyHeader('acme-op'))).status).toBe(404);
    expect((await requestJson('GET', `${gw.url}/v1/silences/${theirs}`, undefined, keyHeader('root'))).body).toMatchObject({ active: true });
  });
});
