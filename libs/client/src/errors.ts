/** An error answer of the gateway: its status, the `code` of its `{error, code}` body, and what else it said. */
export class SluiceApiError extends Error {
  override readonly name = 'SluiceApiError';

  constructor(
    readonly status: number,
    /** The error code (`VALIDATION_FAILED`, `UNAUTHORIZED`, `RATE_LIMITED`…, docs/errors.md); `HTTP_<status>` when the body had none. */
    readonly code: string,
    message: string,
    /** The whole error body (details, retry_after, …). */
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** Builds the error of a non-2xx answer from its (parsed) body. */
export function apiErrorOf(response: Response, body: unknown): SluiceApiError {
  const fields = typeof body === 'object' && body !== null ? (body as { error?: unknown; code?: unknown }) : {};
  const code = typeof fields.code === 'string' ? fields.code : `HTTP_${response.status}`;
  // A proxy's HTML page or an empty body says nothing worth repeating: the status does.
  const text = typeof body === 'string' && body.trim() !== '' && !body.trimStart().startsWith('<') ? body.slice(0, 500) : undefined;
  const message = typeof fields.error === 'string' && fields.error !== '' ? fields.error : (text ?? `${response.status} ${response.statusText}`.trim());
  return new SluiceApiError(response.status, code, message, body);
}

/** The data of an openapi-fetch call, or its refusal thrown as a SluiceApiError. */
export async function dataOf<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (data === undefined) throw apiErrorOf(response, error);
  return data;
}
