import { EventSourceParserStream } from 'eventsource-parser/stream';

/** One frame of `GET /v1/stream` (docs/stream.md): its type, id (absent on `lagged`) and JSON data. */
export interface StreamEvent {
  type: string;
  id: string | undefined;
  data: Record<string, unknown>;
}

/** The frames of an SSE answer as they arrive; stops (and closes the connection) when the loop breaks. */
export async function* streamEvents(response: Response): AsyncGenerator<StreamEvent> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield { type: value.event ?? 'message', id: value.id, data: JSON.parse(value.data) as Record<string, unknown> };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
