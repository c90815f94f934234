import { MAX_THREAD_ID } from '@metronome/core';
import { z } from 'zod';

// PostgreSQL text and jsonb reject NUL, and jsonb unpaired surrogates: refused at the door (400), not at the insert (500).
const UNSTORABLE = /\u0000|\p{Cs}/u;

/** A string of `min`–`max` characters that PostgreSQL can store. */
export const text = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !UNSTORABLE.test(s), 'must not contain NUL characters or unpaired surrogates');

// C0, DEL and C1 controls: a chat id travels in URLs, JSON and headers. Any other character, in any script, is valid.
const NOT_PRINTABLE = /[\u0000-\u001f\u007f-\u009f]|\p{Cs}/u;

/** A chat id: 1–256 printable characters (Unicode code points). */
export const chatId = z
  .string()
  .min(1)
  .max(256)
  .refine((s) => !NOT_PRINTABLE.test(s), 'must be printable text: no control characters (C0 such as CR, LF, NUL or tab; DEL; C1)');

/** Any UUID PostgreSQL accepts (not only RFC 4122 variants). */
export const id = z.guid();

/** A forum topic of a Telegram chat (message_thread_id): the topic's id, a positive integer. */
export const threadId = z
  .number()
  .int()
  .min(1)
  .max(MAX_THREAD_ID)
  .describe("a forum topic of the chat (Telegram's message_thread_id), telegram and telegram_user accounts only; absent: the chat's General");

// The instants PostgreSQL and the scheduler hold, that `toISOString` writes plainly: years 0001–9999 UTC.
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');
export const TIME_RANGE = 'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z in UTC';

export const storableInstant = (ms: number): boolean => ms >= EARLIEST && ms <= LATEST;

/** An ISO-8601 string with an offset, in years 0001–9999 once in UTC (`0000-01-01T00:00:00+23:59` is year -1). */
export const timeInput = z.iso
  // abort: a string that is not ISO-8601 at all is reported once, not again as out of range
  .datetime({ offset: true, abort: true })
  .refine((s) => storableInstant(Date.parse(s)), TIME_RANGE)
  .describe('ISO-8601 with an offset; in UTC between 0001-01-01 and 9999-12-31');
/** An instant out: always UTC. */
export const time = z.iso.datetime();

export const idParams = z.object({ id });

export const errorBody = z
  .object({
    error: z.object({
      code: z.enum([
        'validation_failed',
        'bad_request',
        'unauthorized',
        'not_found',
        'request_timeout',
        'conflict',
        'too_large',
        'unsupported_media_type',
        'rate_limited',
        'internal_error',
      ]),
      message: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string() })),
    }),
  })
  .meta({ id: 'Error' });

export const MAX_LIMIT = 500;

export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  cursor: z.string().min(1).max(2048).optional().describe('nextCursor of the previous page'),
};

/** `{items, nextCursor}`; nextCursor is null on the last page. */
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });

/** The error answers besides 400, 401 and 429 (every /v1 route's), for the OpenAPI document. */
export function errorResponses<C extends number>(...codes: C[]): Record<C | 400 | 401 | 429, typeof errorBody> {
  return Object.fromEntries([400, 401, 429, ...codes].map((code) => [code, errorBody])) as Record<C | 400 | 401 | 429, typeof errorBody>;
}

export const iso = (d: Date): string => d.toISOString();
export const isoOrNull = (d: Date | null): string | null => (d ? d.toISOString() : null);
