import { z } from 'zod';

// Building blocks shared by every resource's schemas.

// PostgreSQL text and jsonb reject NUL, and jsonb rejects unpaired surrogates: refuse them at
// the door (400) instead of letting the insert fail (500).
const UNSTORABLE = /\u0000|\p{Cs}/u;

/** A string of `min`–`max` characters that PostgreSQL can store. */
export const text = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !UNSTORABLE.test(s), 'must not contain NUL characters or unpaired surrogates');

/** Any UUID PostgreSQL accepts (not only RFC 4122 variants). */
export const id = z.guid();

/** An instant in, an ISO-8601 string with an offset (`Z` or `+08:00`). */
export const timeInput = z.iso.datetime({ offset: true });
/** An instant out: always UTC. */
export const time = z.iso.datetime();

export const idParams = z.object({ id });

export const errorBody = z
  .object({
    error: z.object({
      code: z.enum(['validation_failed', 'unauthorized', 'not_found', 'conflict', 'too_large', 'rate_limited', 'internal_error']),
      message: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string() })),
    }),
  })
  .meta({ id: 'Error' });

export const MAX_LIMIT = 500;

/** `limit` and `cursor` of a paginated list. */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  cursor: z.string().min(1).max(2048).optional().describe('nextCursor of the previous page'),
};

/** `{items, nextCursor}`; nextCursor is null on the last page. */
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });

/**
 * The error answers a route can give besides 400, 401 and 429 (which every /v1 route can),
 * for the OpenAPI document: `response: { 200: run, ...errorResponses(404, 409) }`.
 */
export function errorResponses<C extends number>(...codes: C[]): Record<C | 400 | 401 | 429, typeof errorBody> {
  return Object.fromEntries([400, 401, 429, ...codes].map((code) => [code, errorBody])) as Record<C | 400 | 401 | 429, typeof errorBody>;
}

export const iso = (d: Date): string => d.toISOString();
export const isoOrNull = (d: Date | null): string | null => (d ? d.toISOString() : null);
