import type { FastifyError } from 'fastify';
import { toApiError } from './error-handler.js';

// Answers to errors raised below the routes: never the database's or the parser's own text.

const fault = (code: string, message: string, statusCode?: number) =>
  Object.assign(new Error(message), { code, ...(statusCode !== undefined && { statusCode }) }) as FastifyError;

describe('toApiError', () => {
  test('a PostgreSQL data exception is a 400 without its text', () => {
    const err = fault('22008', 'date/time field value out of range: "0000-01-01T00:00:00.000000Z"');
    const known = toApiError(err);
    expect(known?.statusCode).toBe(400);
    expect(JSON.stringify([known?.message, known?.details])).not.toMatch(/date\/time|0000-01-01/);
  });

  test('an unreadable request is a 400 that does not quote Fastify', () => {
    const known = toApiError(fault('FST_ERR_SOMETHING_NEW', "'/v1/x/SECRET' is odd", 400));
    expect(known?.statusCode).toBe(400);
    expect(JSON.stringify([known?.message, known?.details])).not.toContain('SECRET');
  });

  test('a path segment longer than any id is 404 without it', () => {
    const known = toApiError(fault('FST_ERR_MAX_PARAM_LENGTH', "'/v1/campaigns/aaaa' is exceeding the max param length", 414));
    expect(known).toMatchObject({ statusCode: 404, code: 'not_found', message: 'no such resource', details: [] });
  });

  test('an unsupported media type is 415, a malformed one 400; both name content-type', () => {
    const err = fault('FST_ERR_CTP_INVALID_MEDIA_TYPE', 'Unsupported Media Type', 415);
    expect(toApiError(err, 'text/plain')).toMatchObject({ statusCode: 415, code: 'unsupported_media_type', details: [{ field: 'content-type' }] });
    for (const header of ['image', '/png', ';;;', undefined]) {
      expect(toApiError(err, header)).toMatchObject({
        statusCode: 400,
        code: 'validation_failed',
        details: [{ field: 'content-type', message: 'expected a media type, type/subtype' }],
      });
    }
  });

  test("a body over the route's limit is 413 naming the body and the limit", () => {
    const known = toApiError(fault('FST_ERR_CTP_BODY_TOO_LARGE', 'Request body is too large', 413), 'image/png', 4096);
    expect(known).toMatchObject({
      statusCode: 413,
      code: 'too_large',
      message: 'the request body is larger than 4096 bytes',
      details: [{ field: 'body', message: 'at most 4096 bytes' }],
    });
  });
});
