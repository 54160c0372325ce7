import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { postOpenAi } from './openai-client.js';

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('postOpenAi', () => {
  it('names the error code, not the endpoint’s address, when the endpoint cannot be reached (the message reaches tenants)', async () => {
    const port = await closedPort();
    const failure = await postOpenAi(`http://127.0.0.1:${port}/v1`, '/embeddings', {}, { apiKey: undefined, timeoutMs: 2000 }).catch((err: Error) => err);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('/embeddings could not be reached (ECONNREFUSED)');
    expect((failure as Error).message).not.toContain(String(port));
  });
});
