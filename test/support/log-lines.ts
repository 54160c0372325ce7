import { Writable } from 'node:stream';

/** A logger destination that keeps every line written to it, parsed: for tests that read what was logged. */
export function capturedLogLines(): { destination: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { destination, lines };
}
