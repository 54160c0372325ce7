/** One operation of the served OpenAPI document: its method (lower case), path template and documented responses. */
export interface DocumentedOperation {
  method: string;
  path: string;
  responses: Record<string, unknown>;
}

/** The live stream never ends: sweeps leave it to its own tests (stream.test.ts). */
const ENDLESS = new Set(['get /v1/stream']);

/** Every operation the gateway at `baseUrl` documents, but the endless stream. */
export async function documentedOperations(baseUrl: string): Promise<DocumentedOperation[]> {
  const doc = (await (await fetch(`${baseUrl}/api-doc/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  return Object.entries(doc.paths)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, responses: op.responses })))
    .filter(({ method, path }) => !ENDLESS.has(`${method} ${path}`));
}

/** The operation's URL with every path parameter naming something that does not exist. */
export function urlOfUnknown(baseUrl: string, path: string): string {
  return `${baseUrl}${path.replace(/\{[^}]+\}/g, 'no-such-thing')}`;
}
