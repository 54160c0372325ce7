import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local OpenAI-compatible server for tests: `/embeddings` and `/chat/completions`, no model behind them. */
export interface OpenAiServer {
  /** The API base (`…/v1`), as `embedding.endpoint` takes it. */
  url: string;
  /** Vectors for given inputs; any other input gets a deterministic vector from a hash of its text. */
  vectors: Map<string, number[]>;
  /** What `/chat/completions` answers as the message content (a string, sent as is). */
  chatReply: (userContent: string) => string;
  /** The status every call answers with (200 unless a test breaks the server). */
  status: number;
  /** Calls by path, in order, with their parsed bodies. */
  calls: { path: string; body: Record<string, unknown>; authorization: string | undefined }[];
  close(): Promise<void>;
}

function hashVector(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from(digest.subarray(0, 16), (b) => b / 255 - 0.5);
}

export async function startOpenAiServer(): Promise<OpenAiServer> {
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      const path = (req.url ?? '').replace(/^\/v1/, '');
      api.calls.push({ path, body, authorization: req.headers.authorization });
      const send = (status: number, answer: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      if (api.status !== 200) return send(api.status, { error: { message: 'broken on purpose' } });
      if (path === '/embeddings') {
        const input = String(body.input);
        return send(200, {
          object: 'list',
          data: [{ object: 'embedding', index: 0, embedding: api.vectors.get(input) ?? hashVector(input) }],
          model: body.model,
        });
      }
      if (path === '/chat/completions') {
        const messages = body.messages as { role: string; content: string }[];
        const user = messages.find((m) => m.role === 'user')?.content ?? '';
        return send(200, {
          id: 'chat-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: api.chatReply(user) }, finish_reason: 'stop' }],
        });
      }
      return send(404, { error: { message: `no route ${path}` } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const api: OpenAiServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    vectors: new Map(),
    chatReply: () => JSON.stringify({ flagged: false, reason: 'fine' }),
    status: 200,
    calls: [],
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return api;
}
