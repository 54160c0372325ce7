import { describe, expect, it } from 'vitest';
import { LogProvider } from './log-provider.js';
import { createProviders, ProviderRegistry } from './registry.js';
import type { ProviderSpec } from './spec.js';
import { ctx, makeAction } from './testing/http-server.js';

const spec = (over: Partial<ProviderSpec> & Pick<ProviderSpec, 'name' | 'type'>): ProviderSpec => ({
  headers: {},
  max_response_bytes: 1024,
  ...over,
});

describe('ProviderRegistry', () => {
  it('falls back to one shared noop for any name when nothing is configured', async () => {
    const reg = createProviders([]);
    const a = reg.get('anything');
    expect(a).toBeDefined();
    expect(a).toBe(reg.get('else'));
    expect(a?.type).toBe('noop');
    expect(reg.has('whatever')).toBe(true);
    expect(reg.isFallback).toBe(true);
    expect(reg.names()).toEqual([]);
    expect(await a?.execute(makeAction(), ctx())).toEqual({ status: 'success', body: {}, headers: {} });
  });

  it('finds configured providers only, once any are configured', async () => {
    const reg = createProviders([
      spec({ name: 'quiet', type: 'noop' }),
      spec({ name: 'audit', type: 'log' }),
      spec({ name: 'hook', type: 'webhook', url: 'http://127.0.0.1:9/x', timeout_ms: 500, hmac_secret: 's' }),
    ]);
    expect(reg.names()).toEqual(['quiet', 'audit', 'hook']);
    expect(reg.get('hook')?.type).toBe('webhook');
    expect(reg.get('audit')?.type).toBe('log');
    expect(reg.get('missing')).toBeUndefined();
    expect(reg.has('missing')).toBe(false);
    expect(reg.isFallback).toBe(false);
    await reg.close();
  });

  it('rejects duplicate names and a webhook without url', () => {
    expect(() => createProviders([spec({ name: 'a', type: 'noop' }), spec({ name: 'a', type: 'log' })])).toThrow(/duplicate/);
    expect(() => createProviders([spec({ name: 'h', type: 'webhook' })])).toThrow(/url/);
    expect(() => new ProviderRegistry([])).not.toThrow();
  });
});

describe('LogProvider', () => {
  it('logs and echoes what it received', async () => {
    const logged: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
    const reg = createProviders([spec({ name: 'audit', type: 'log' })], { log: (level, obj, msg) => logged.push({ level, obj, msg }) });
    const action = makeAction({ provider: 'audit' });
    const res = await reg.get('audit')!.execute(action, ctx());
    const received = {
      id: 'a-1',
      namespace: 'ns',
      tenant: 't1',
      provider: 'audit',
      action_type: 'notify',
      payload: action.payload,
      metadata: action.metadata,
    };
    expect(res).toEqual({ status: 'success', body: { provider: 'audit', logged: true, received }, headers: {} });
    // The payload only at debug; at info, who and what, and no `msg` field beside the message.
    expect(logged).toEqual([
      {
        level: 'info',
        obj: { provider: 'audit', action_id: 'a-1', namespace: 'ns', tenant: 't1', action_type: 'notify' },
        msg: 'log provider received action',
      },
      { level: 'debug', obj: { provider: 'audit', action: received }, msg: 'log provider action' },
    ]);
    expect(await new LogProvider('quiet').execute(action, ctx())).toMatchObject({ status: 'success' });
  });
});
