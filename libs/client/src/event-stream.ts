import { EventSourceParserStream } from 'eventsource-parser/stream';

/** One frame of `GET /v1/stream` (docs/stream.md): its type, id (absent on `lagged`) and JSON data. */
export interface StreamEvent {
  type: string;
  id: string | undefined;
  data: Record<string, unknown>;
}

/**
 * The gateway ended the stream: it never does so for a caller still entitled to it, so a loop
 * over the frames must not end as if nothing happened. A replica shutting down, the caller's
 * key removed or token expired: subscribe again (a 401 then says which), and read what was
 * missed meanwhile from the audit trail (the stream has no replay).
 */
export class SluiceStreamClosed extends Error {
  override readonly name = 'SluiceStreamClosed';

  constructor() {
    super('the gateway closed the stream; subscribe again (the stream has no replay: the audit trail has what was missed)');
  }
}

/**
 * The frames of an SSE answer as they arrive; stops (and closes the connection) when the loop
 * breaks, and throws SluiceStreamClosed when the gateway ends the answer.
 */
export async function* streamEvents(response: Response): AsyncGenerator<StreamEvent> {
  if (response.body === null) throw new SluiceStreamClosed();
  const reader = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new SluiceStreamClosed();
      yield { type: value.event ?? 'message', id: value.id, data: JSON.parse(value.data) as Record<string, unknown> };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
