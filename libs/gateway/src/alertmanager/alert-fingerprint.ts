/*
 * An alert's fingerprint as Prometheus and Alertmanager compute it (prometheus/common's
 * LabelSet.Fingerprint): FNV-1a, 64 bits, over the label names in byte order, each name and its
 * value followed by the byte 0xff; 16 lower-case hex digits. The same labels give the same
 * fingerprint here, in Alertmanager's webhook payloads and in its UI.
 */

const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;
const SEPARATOR = 0xff;

export function alertFingerprint(labels: Readonly<Record<string, string>>): string {
  const encoder = new TextEncoder();
  let hash = OFFSET;
  const add = (byte: number) => {
    hash = ((hash ^ BigInt(byte)) * PRIME) & MASK;
  };
  // Byte order of the UTF-8 names, as Go sorts strings.
  const names = Object.keys(labels).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of names) {
    for (const byte of encoder.encode(name)) add(byte);
    add(SEPARATOR);
    for (const byte of encoder.encode(labels[name] ?? '')) add(byte);
    add(SEPARATOR);
  }
  return hash.toString(16).padStart(16, '0');
}
