import { createHmac, randomBytes } from 'node:crypto';
import { encryptValue } from '@sluice/auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeConfigFile } from '../support/config-file.js';
import { freePort } from '../support/free-port.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { runSluice, spawnSluice, type SluiceProcess } from '../support/sluice-process.js';
import { postJson, sampleAction } from '../support/start-gateway.js';

/*
 * A webhook's credentials given as ENC[...] reach the target decrypted: in a Helm ConfigMap or a
 * checked-in sluice.yaml they need not be plain text. Real `sluice serve` processes, since the
 * master key comes from their environment. (Nothing here touches state: one backend suffices.)
 */
describe('webhook credentials as ENC[...] values', () => {
  const key = randomBytes(32);
  const secret = 'topsecret-signing-key';
  const config = (sinkUrl: string) =>
    writeConfigFile(
      [
        'providers:',
        '  - name: hook',
        '    type: webhook',
        `    url: ${sinkUrl}`,
        `    hmac_secret: "${encryptValue(secret, key)}"`,
        `    headers: { authorization: "${encryptValue('Bearer partner-token', key)}", x-team: core }`,
      ].join('\n'),
    );
  let sink: HttpSink;
  let gateway: SluiceProcess;

  beforeAll(async () => {
    sink = await startSink();
    const port = await freePort();
    gateway = await spawnSluice(['serve', '--config', config(sink.url), '--port', String(port)], { port, env: { SLUICE_AUTH_KEY: key.toString('hex') } });
  });
  afterAll(async () => {
    gateway?.kill();
    await gateway?.exited;
    await sink?.close();
  });

  it('signs with the decrypted hmac_secret and sends the decrypted header values', async () => {
    const res = await postJson(`${gateway.url}/v1/dispatch`, sampleAction({ provider: 'hook', id: 'enc-1' }));
    expect(res.body).toMatchObject({ outcome: 'executed' });
    const call = sink.received.find((c) => c.id === 'enc-1');
    expect(call?.headers['authorization']).toBe('Bearer partner-token');
    expect(call?.headers['x-team']).toBe('core');
    const signed = call?.headers['x-sluice-signature'];
    expect(signed).toBe(
      `sha256=${createHmac('sha256', secret)
        .update(call?.rawBody ?? '')
        .digest('hex')}`,
    );
  });

  it('refuses to start without the master key, naming the field and not the value', async () => {
    const res = await runSluice(['serve', '--config', config(sink.url), '--port', String(await freePort())], { env: { SLUICE_AUTH_KEY: '' } });
    expect(res.code).not.toBe(0);
    expect(res.stderr + res.stdout).toContain('providers[hook].headers.authorization');
    expect(res.stderr + res.stdout).not.toContain('ENC[');
  });
});
