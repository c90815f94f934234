// The API's coded errors (CONTRACT §3), turned into the one error body by error-handler.ts. Never match one by its message.

export type ErrorCode =
  | 'validation_failed'
  | 'bad_request'
  | 'unauthorized'
  | 'not_found'
  | 'request_timeout'
  | 'conflict'
  | 'too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error';

/** One bad field: a dotted path into the request (`deliveryWindow.start`, `targets.3`, `limit`). */
export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldProblem[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const validationFailed = (details: FieldProblem[], message = 'the request is not valid'): ApiError =>
  new ApiError(400, 'validation_failed', message, details);

export const invalidField = (field: string, message: string): ApiError => validationFailed([{ field, message }]);

export const unauthorized = (message = 'a valid bearer token is required'): ApiError => new ApiError(401, 'unauthorized', message);

/** Missing and foreign resources answer alike, so ids cannot be probed across tenants. */
export const notFound = (what = 'resource'): ApiError => new ApiError(404, 'not_found', `no such ${what}`);

export const conflict = (message: string): ApiError => new ApiError(409, 'conflict', message);

export const tooLarge = (message: string): ApiError => new ApiError(413, 'too_large', message);

export const rateLimited = (retryAfterSeconds: number): ApiError =>
  new ApiError(429, 'rate_limited', `too many requests; retry in ${retryAfterSeconds} s`, [], { 'retry-after': String(retryAfterSeconds) });

export function errorBody(code: ErrorCode, message: string, details: FieldProblem[] = []) {
  return { error: { code, message, details } };
}
