/** A frame of a text/event-stream: `event:` (default `message`), `id:`, `data:` (JSON-parsed). */
export interface SseFrame {
  event: string;
  id: string | undefined;
  data: Record<string, unknown>;
}

export interface SseStream {
  status: number;
  /** The JSON error body of a refused connection. */
  error: Record<string, unknown> | null;
  frames: SseFrame[];
  /** Comment lines (`: ping`), without the colon. */
  comments: string[];
  /** Settles when the stream ends: closed by the server, or by close(). */
  ended: Promise<void>;
  /** The first frame (already received or still to come) that `matches`. */
  next(matches: (f: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  close(): void;
}

/** Opens GET `url` as a stream and parses its frames as they arrive (a minimal EventSource, for assertions). */
export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  let markEnded = () => {};
  const stream: SseStream = {
    status: res.status,
    error: null,
    ended: new Promise((resolve) => {
      markEnded = resolve;
    }),
    frames,
    comments,
    next: (matches, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.find(matches);
          if (!found) return false;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const wake = () => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames.map((f) => f.event))}`));
        }, timeoutMs);
        if (!check()) waiters.add(wake);
      }),
    close: () => abort.abort(),
  };
  if (res.status !== 200) {
    stream.error = (await res.json()) as Record<string, unknown>;
    markEnded();
    return stream;
  }
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const frame: SseFrame = { event: 'message', id: undefined, data: {} };
          let isFrame = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event:')) frame.event = line.slice(6).trim();
            else if (line.startsWith('id:')) frame.id = line.slice(3).trim();
            else if (line.startsWith('data:')) {
              frame.data = JSON.parse(line.slice(5).trim()) as Record<string, unknown>;
              isFrame = true;
            }
          }
          if (isFrame) frames.push(frame);
          for (const wake of [...waiters]) wake();
        }
      }
    } catch {
      // aborted by close(), or the server went away
    }
    markEnded();
  })();
  return stream;
}
