/**
 * Counts complete RESP values in a byte stream (RESP2 and RESP3 types), for the counting proxy:
 * on the client side each top-level value is a command (an array whose first element names it),
 * on the server side each is a reply. Partial values are kept until the rest arrives.
 */

const CRLF = 0x0d;

/** Position after the CRLF that ends the line starting at `pos`, or -1 if incomplete. */
function lineEnd(buf: Buffer, pos: number): number {
  const i = buf.indexOf(CRLF, pos);
  return i === -1 || i + 1 >= buf.length ? -1 : i + 2;
}

/** End position of the value starting at `pos`, or -1 when the buffer does not hold all of it. */
function valueEnd(buf: Buffer, pos: number): number {
  if (pos >= buf.length) return -1;
  const type = String.fromCharCode(buf[pos] as number);
  const end = lineEnd(buf, pos);
  if (end === -1) return -1;
  const header = buf.toString('latin1', pos + 1, end - 2);
  switch (type) {
    case '+':
    case '-':
    case ':':
    case '_':
    case ',':
    case '#':
    case '(':
      return end;
    case '$':
    case '=':
    case '!': {
      const len = Number(header);
      if (len < 0) return end;
      return end + len + 2 <= buf.length ? end + len + 2 : -1;
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      const n = Number(header);
      if (n < 0) return end;
      const items = type === '%' || type === '|' ? n * 2 : n;
      let at = end;
      for (let k = 0; k < items; k++) {
        at = valueEnd(buf, at);
        if (at === -1) return -1;
      }
      // An attribute precedes the value it annotates; count them as one.
      return type === '|' ? valueEnd(buf, at) : at;
    }
    default:
      // Inline command (telnet style): one line.
      return end;
  }
}

/** A bulk string at `pos` ('$<len>\r\n<bytes>\r\n'): its text and the position after it, or null. */
function bulkAt(buf: Buffer, pos: number): { text: string; end: number } | null {
  if (buf[pos] !== 0x24 /* '$' */) return null;
  const start = lineEnd(buf, pos);
  if (start === -1) return null;
  const len = Number(buf.toString('latin1', pos + 1, start - 2));
  return { text: buf.toString('latin1', start, start + len), end: start + len + 2 };
}

export interface RespCommand {
  /** Upper case. */
  name: string;
  /** The first argument (usually the key); '' when there is none. */
  arg: string;
}

/** Name and first argument of a client-side value (an array of bulk strings). */
function commandOf(buf: Buffer, pos: number): RespCommand {
  if (buf[pos] !== 0x2a /* '*' */) {
    const words = buf.toString('latin1', pos, Math.max(pos, buf.indexOf(CRLF, pos))).split(' ');
    return { name: (words[0] ?? '?').toUpperCase(), arg: words[1] ?? '' };
  }
  const first = lineEnd(buf, pos);
  const name = first === -1 ? null : bulkAt(buf, first);
  if (!name) return { name: '?', arg: '' };
  return { name: name.text.toUpperCase(), arg: bulkAt(buf, name.end)?.text ?? '' };
}

export class RespStream {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly withNames: boolean) {}

  /** Feeds bytes; returns the complete top-level values they finished (name and first argument when withNames). */
  push(chunk: Buffer): RespCommand[] {
    const buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const done: RespCommand[] = [];
    let pos = 0;
    for (;;) {
      const end = valueEnd(buf, pos);
      if (end === -1) break;
      done.push(this.withNames ? commandOf(buf, pos) : { name: '', arg: '' });
      pos = end;
    }
    this.pending = pos === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(pos));
    return done;
  }
}
