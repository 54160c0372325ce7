import { z } from 'zod';

/** The most entries one list page holds, on every list that pages. */
const MAX_PAGE = 1000;

/** `limit` and `offset` of a list that pages by offset: out of range is a 400, never clamped. */
export function pageQuery(defaultLimit = 100) {
  return {
    limit: z.number().int().min(1).max(MAX_PAGE).default(defaultLimit).describe(`page size, 1..${MAX_PAGE}`),
    offset: z.number().int().min(0).default(0),
  };
}
