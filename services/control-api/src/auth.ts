import { hashToken, sameDigest } from '@metronome/core';
import type { FastifyRequest } from 'fastify';
import type { ApiContext } from './context.js';
import { rateLimited, unauthorized } from './errors.js';
import type { RateLimiter } from './rate-limiter.js';

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,1024})[ \t]*$/i;

/**
 * The onRequest hook of every /v1 route: identifies the caller from `Authorization: Bearer`,
 * or answers 401; then applies the per-token rate limit (429). The admin token is compared as
 * a sha256 digest in constant time; tenant tokens are looked up by their digest, which is all
 * the database holds.
 */
export function authenticate(ctx: ApiContext, limiter: RateLimiter) {
  const adminDigest = ctx.config.adminToken === null ? null : hashToken(ctx.config.adminToken);
  return async (req: FastifyRequest): Promise<void> => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const token = match?.[1];
    if (token === undefined) throw unauthorized();
    const digest = hashToken(token);
    // Before the lookup: a flood of guessed tokens is limited too, not only valid ones.
    const waitMs = await limiter.take(digest);
    if (waitMs > 0) throw rateLimited(Math.ceil(waitMs / 1000));
    if (adminDigest !== null && sameDigest(digest, adminDigest)) {
      req.caller = { admin: true, tenantId: null };
      return;
    }
    const tenantId = await ctx.tenants.findIdByTokenHash(digest);
    if (tenantId === null) throw unauthorized('unknown token');
    req.caller = { admin: false, tenantId };
  };
}
