import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { answerThenDrain, bodyTooLarge } from './body-limit.js';
import { ApiError, errorBody, type FieldProblem } from './errors.js';
import { mediaTypeOf } from './schemas/media.js';

/** Every failure becomes the contract's error body; Fastify's own errors are mapped by code, so bad input never becomes a 5xx. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler<FastifyError | ApiError>((err, req, reply) => {
    const limit = req.routeOptions.bodyLimit;
    const known = toApiError(err, req.headers['content-type'], limit);
    if (known) {
      // Fastify's and PostgreSQL's rejections are kept in the log: they show which input got how far.
      if (!(err instanceof ApiError)) req.log.info({ err, code: known.code }, 'request rejected');
      // a body over the limit, not read to its end: answered now, the socket closed once it is drained
      if (known.statusCode === 413 && !req.raw.complete) return answerThenDrain(req, reply, known, limit);
      return reply
        .code(known.statusCode)
        .headers(known.headers)
        .send(errorBody(known.code, known.message, known.details));
    }
    req.log.error({ err }, 'request failed');
    return reply.code(500).send(errorBody('internal_error', 'internal error; the server log has the details'));
  });

  // The path is not echoed: it is the client's input, of any length.
  app.setNotFoundHandler((_req, reply) => reply.code(404).send(errorBody('not_found', 'no such route')));
}

/** The coded error for `err`, or null for a server fault; nothing here quotes the request or the database (that stays logged). */
export function toApiError(err: FastifyError | ApiError, contentType?: string, bodyLimit?: number): ApiError | null {
  if (err instanceof ApiError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    // A malformed id in the path cannot name anything that exists: same answer as a missing one.
    if (err.validationContext === 'params') return new ApiError(404, 'not_found', 'no such resource');
    const context = err.validationContext ?? 'body';
    return new ApiError(
      400,
      'validation_failed',
      'the request is not valid',
      err.validation.flatMap((v) => fieldProblems(v, context)),
    );
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLargeFor(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return mediaTypeOf(contentType) === null
        ? new ApiError(400, 'validation_failed', 'malformed Content-Type', [{ field: 'content-type', message: 'expected a media type, type/subtype' }])
        : new ApiError(415, 'unsupported_media_type', 'unsupported Content-Type', [{ field: 'content-type', message: 'expected application/json' }]);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'validation_failed', 'the body is not valid JSON', [{ field: 'body', message: err.message }]);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'validation_failed', 'the body is not as long as Content-Length says', [
        { field: 'content-length', message: 'does not match the body' },
      ]);
    // A path segment longer than any id (Fastify's maxParamLength) cannot name anything either.
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(404, 'not_found', 'no such resource');
  }
  const status = err.statusCode ?? 500;
  if (status === 404) return new ApiError(404, 'not_found', 'no such resource');
  if (status === 413) return tooLargeFor(bodyLimit);
  if (status >= 400 && status < 500)
    return new ApiError(400, 'validation_failed', 'the request could not be read', [{ field: 'body', message: 'could not be read' }]);
  // PostgreSQL data exceptions (class 22) come from input the schemas let through: the client's to fix. Their text stays logged.
  const sqlState = (err as { code?: unknown }).code;
  if (typeof sqlState === 'string' && /^22[0-9A-Z]{3}$/.test(sqlState)) {
    return new ApiError(400, 'validation_failed', 'a value could not be stored', [{ field: 'body', message: 'a value is out of range or not storable' }]);
  }
  return null;
}

function tooLargeFor(bodyLimit: number | undefined): ApiError {
  return bodyLimit === undefined ? new ApiError(413, 'too_large', 'the request body is larger than this route accepts') : bodyTooLarge(bodyLimit);
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string | undefined;
  params: Record<string, unknown>;
}

// zod's `/deliveryWindow/start` becomes the contract's `deliveryWindow.start`.
function fieldProblems(v: ValidationIssue, context: string): FieldProblem[] {
  const path = v.instancePath.split('/').filter(Boolean).join('.');
  if (v.keyword === 'unrecognized_keys' && Array.isArray(v.params['keys'])) {
    return (v.params['keys'] as unknown[]).map((key) => ({ field: path ? `${path}.${String(key)}` : String(key), message: 'unknown field' }));
  }
  return [{ field: path || (context === 'querystring' ? 'query' : context), message: v.message ?? 'invalid' }];
}
