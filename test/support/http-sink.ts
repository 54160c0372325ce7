import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface ReceivedCall {
  id: string;
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** The request's headers (a `traceparent`, say). */
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent (what a signature covers). */
  rawBody: string;
}

export interface HttpSink {
  url: string;
  /** Every provider call received, in arrival order (duplicates included, failed answers too). */
  received: ReceivedCall[];
  /** The HTTP status it answers with from now on (200 unless a test sets another). */
  status: number;
  /** The JSON body of a successful answer to a call (default `{"ok":true}`). */
  reply: ((call: ReceivedCall) => unknown) | undefined;
  /** Instead of `reply`: the answer's text, sent as JSON as it is (a document JSON.stringify could not write, say). */
  rawReply: ((call: ReceivedCall) => string) | undefined;
  /** How long to wait before answering a call (default: at once). */
  delayMs: ((call: ReceivedCall) => number) | undefined;
  close(): Promise<void>;
}

/** A local HTTP endpoint for a webhook provider: records each posted action and answers `status` (200). */
export async function startSink(): Promise<HttpSink> {
  const received: ReceivedCall[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = { ...(JSON.parse(body) as Omit<ReceivedCall, 'headers' | 'rawBody'>), headers: req.headers, rawBody: body };
      received.push(call);
      const answer = sink.status >= 300 ? { ok: false } : sink.reply ? sink.reply(call) : { ok: true };
      const text = sink.status < 300 && sink.rawReply ? sink.rawReply(call) : JSON.stringify(answer);
      const send = () => res.writeHead(sink.status, { 'content-type': 'application/json' }).end(text);
      const delay = sink.delayMs?.(call) ?? 0;
      if (delay > 0) setTimeout(send, delay);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const sink: HttpSink = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    received,
    status: 200,
    reply: undefined,
    rawReply: undefined,
    delayMs: undefined,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return sink;
}
