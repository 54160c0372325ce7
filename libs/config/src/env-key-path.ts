import { z } from 'zod';

/** The schema beneath the wrappers that do not change the shape of a value (defaults, optionals, transforms). */
function unwrapped(schema: z.ZodType | undefined): z.ZodType | undefined {
  let node = schema;
  for (let depth = 0; node !== undefined && depth < 16; depth++) {
    if (node instanceof z.ZodDefault || node instanceof z.ZodPrefault || node instanceof z.ZodOptional || node instanceof z.ZodNullable) {
      node = node.unwrap() as z.ZodType;
    } else if (node instanceof z.ZodPipe) node = node.in as z.ZodType;
    else return node;
  }
  return node;
}

/**
 * An environment variable's segments as a config key path: field names lower-cased (variables are
 * written in upper case), but a map's keys — a tenant, a caller, a provider, a header name —
 * kept as written, since they are case-sensitive and `SLUICE_RATE_LIMIT__TENANT_OVERRIDES__AcmeCorp__…`
 * must set AcmeCorp's limit, not acmecorp's.
 */
export function envKeyPath(root: z.ZodType, segments: readonly string[]): string[] {
  let node: z.ZodType | undefined = root;
  return segments.map((segment) => {
    const inner = unwrapped(node);
    if (inner instanceof z.ZodRecord) {
      node = inner.valueType as z.ZodType;
      return segment;
    }
    const key = segment.toLowerCase();
    if (inner instanceof z.ZodObject) node = inner.shape[key] as z.ZodType | undefined;
    else if (inner instanceof z.ZodArray) node = inner.element as z.ZodType;
    else node = undefined;
    return key;
  });
}
