import { hashToken, sameDigest } from '@metronome/core';
import type { FastifyRequest } from 'fastify';
import type { ApiContext } from './context.js';
import { rateLimited, unauthorized } from './errors.js';
import type { RateLimiter } from './rate-limiter.js';

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,1024})[ \t]*$/i;

/**
 * The shape of every tenant token: `newToken()` (libs/core secrets.ts) is `mtr_` and 24 random
 * bytes in base64url. Anything else cannot be one, so it is refused without a lookup.
 */
export const TENANT_TOKEN = /^mtr_[A-Za-z0-9_-]{32}$/;

export interface AuthLimits {
  /** requests per token (API_RATE_LIMIT_PER_MINUTE) */
  perToken: RateLimiter;
  /** failed authentications per client address (AUTH_FAILURES_PER_MINUTE) */
  failures: RateLimiter;
}

/** The failure limit's key for a client address (req.ip: the socket's, or X-Forwarded-For's from a trusted proxy). */
export const failureKey = (address: string): string => `auth-failures:${address}`;

/**
 * The onRequest hook of every /v1 route: identifies the caller from `Authorization: Bearer`,
 * or answers 401; 429 when the caller's address has failed too often, or the token has made
 * too many requests.
 *
 * Every request spends one of its address's failure allowance before its token is checked, and
 * gets it back when the token proves valid: so at most AUTH_FAILURES_PER_MINUTE tokens from one
 * address are looked up a minute without one proving valid, however many arrive at once, and an
 * address over its limit is refused (every request, valid token or not) before any lookup. A
 * missing token or one that cannot be ours by its shape is refused without a lookup and counts
 * as a failure. The admin token is compared as a sha256 digest in constant time; tenant tokens
 * are looked up by their digest, which is all the database holds.
 */
export function authenticate(ctx: ApiContext, limits: AuthLimits) {
  const adminDigest = ctx.config.adminToken === null ? null : hashToken(ctx.config.adminToken);
  return async (req: FastifyRequest): Promise<void> => {
    const address = failureKey(req.ip);
    const failureWait = await limits.failures.take(address);
    if (failureWait > 0) throw rateLimited(Math.ceil(failureWait / 1000));

    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined) throw unauthorized();
    const digest = hashToken(token);
    const admin = adminDigest !== null && sameDigest(digest, adminDigest);
    if (!admin && !TENANT_TOKEN.test(token)) throw unauthorized('unknown token');

    const tokenWait = await limits.perToken.take(digest);
    if (tokenWait > 0) {
      await limits.failures.giveBack(address);
      throw rateLimited(Math.ceil(tokenWait / 1000));
    }
    if (admin) {
      await limits.failures.giveBack(address);
      req.caller = { admin: true, tenantId: null };
      return;
    }
    let tenantId: string | null;
    try {
      tenantId = await ctx.tenants.findIdByTokenHash(digest);
    } catch (err) {
      // the lookup failed, not the token: no failure to count
      await limits.failures.giveBack(address);
      throw err;
    }
    if (tenantId === null) throw unauthorized('unknown token');
    await limits.failures.giveBack(address);
    req.caller = { admin: false, tenantId };
  };
}
