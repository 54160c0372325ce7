import { encryptValue, parseMasterKey } from '@sluice/auth';

/** `sluice encrypt`: stdin (trailing newlines stripped) → ENC[AES256-GCM,...] on stdout. */
export async function encrypt(input: NodeJS.ReadableStream, env: NodeJS.ProcessEnv): Promise<string> {
  const key = parseMasterKey(env.SLUICE_AUTH_KEY);
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const secret = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/[\r\n]+$/, '');
  if (!secret) throw new Error('nothing to encrypt: stdin was empty');
  return encryptValue(secret, key);
}
