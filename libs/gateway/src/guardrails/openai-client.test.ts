import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseAnswer, postOpenAi } from './openai-client.js';

/** An HTTP server answering every request with `handler`, on a free local port, for the duration of `use`. */
async function withServer<T>(handler: RequestListener, use: (url: string) => Promise<T>): Promise<T> {
  const server = createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await use(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

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

  it('refuses an answer over 4 MiB as it streams, without reading the rest (one answer without end took the process down)', async () => {
    let sent = 0;
    const endless: RequestListener = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (sent < 64 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
      };
      res.on('drain', pump);
      res.on('close', () => res.off('drain', pump));
      pump();
    };
    const failure = await withServer(endless, (url) =>
      postOpenAi(url, '/chat/completions', {}, { apiKey: undefined, timeoutMs: 10_000 }).catch((err: Error) => err),
    );
    expect((failure as Error).message).toBe('/chat/completions answered more than 4194304 bytes');
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses an answer whose declared length is over the limit before reading it', async () => {
    const declared: RequestListener = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(1e9) });
      res.write('{');
    };
    const failure = await withServer(declared, (url) =>
      postOpenAi(url, '/embeddings', {}, { apiKey: undefined, timeoutMs: 10_000 }).catch((err: Error) => err),
    );
    expect((failure as Error).message).toBe('/embeddings answered more than 4194304 bytes');
  });
});

describe('parseAnswer', () => {
  it('names the first problem only, however many an answer has (a tenant can steer what a model answers)', () => {
    const Verdict = z.strictObject({ flagged: z.boolean() });
    const extraKeys = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`key${i}`, i]));
    const failure = (() => {
      try {
        return parseAnswer(Verdict, { flagged: true, ...extraKeys }, "the evaluator's answer");
      } catch (err) {
        return err as Error;
      }
    })();
    expect((failure as Error).message).toBe("the evaluator's answer does not have the expected shape (unrecognized_keys)");
    const Chat = z.object({ choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1) });
    expect(() => parseAnswer(Chat, { choices: Array.from({ length: 20_000 }, () => ({})) }, 'the chat answer')).toThrow(
      /^the chat answer does not have the expected shape \(invalid_type at choices\.0\.message\)$/,
    );
    expect(parseAnswer(Verdict, { flagged: false }, 'x')).toEqual({ flagged: false });
  });
});
