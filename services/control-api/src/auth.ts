import { hashToken, sameDigest } from '@metronome/core';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { ApiContext } from './context.js';
import { rateLimited, unauthorized } from './errors.js';
import type { AuthLimiter } from './rate-limiter.js';

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,1024})[ \t]*$/i;

/**
 * The shape of every tenant token: `newToken()` (libs/core secrets.ts) is `mtr_` and 24 random
 * bytes in base64url. Anything else cannot be one, so it is refused without a lookup.
 */
export const TENANT_TOKEN = /^mtr_[A-Za-z0-9_-]{32}$/;

/**
 * How long a replica trusts a tenant token it has looked up, without looking again. A token
 * never changes its tenant and is never reissued; this bounds how long a token that stops
 * existing would still be taken by a replica that saw it.
 */
export const KNOWN_TOKEN_MS = 60_000;

/** The failure limit's key for a client address (req.ip: the socket's, or X-Forwarded-For's from a trusted proxy). */
export const failureKey = (address: string): string => `auth-failures:${address}`;

/**
 * The onRequest hook of every /v1 route: identifies the caller from `Authorization: Bearer`,
 * or answers 401; 429 when the caller's address has failed too often, or the token has made
 * too many requests.
 *
 * A token to be looked up spends one of its address's failure allowance first, given back when
 * it proves valid: so at most AUTH_FAILURES_PER_MINUTE tokens from one address are looked up a
 * minute without one proving valid, however many arrive at once. An address over its limit is
 * refused (every request, valid token or not) before any lookup. A missing token or one that
 * cannot be ours by its shape is refused without a lookup and counts as a failure. The admin
 * token is compared as a sha256 digest in constant time; tenant tokens are looked up by their
 * digest, which is all the database holds, and a valid one is remembered for KNOWN_TOKEN_MS
 * (up to 10,000 of them). A known token costs one Redis call and no query: the failure limit
 * checked and the token's request taken in one script.
 */
export function authenticate(ctx: ApiContext, limits: AuthLimiter) {
  const adminDigest = ctx.config.adminToken === null ? null : hashToken(ctx.config.adminToken);
  const known = new LRUCache<string, string>({ max: 10_000, ttl: KNOWN_TOKEN_MS, ttlResolution: 0, perf: { now: () => ctx.clock.now() } });
  const refuse = async (address: string, reason?: string): Promise<never> => {
    const wait = await limits.takeFailure(address);
    if (wait > 0) throw rateLimited(Math.ceil(wait / 1000));
    throw unauthorized(reason);
  };
  return async (req: FastifyRequest): Promise<void> => {
    const address = failureKey(req.ip);
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined) return refuse(address);
    const digest = hashToken(token);
    const admin = adminDigest !== null && sameDigest(digest, adminDigest);
    if (!admin && !TENANT_TOKEN.test(token)) return refuse(address, 'unknown token');

    let knownTenant = admin ? undefined : known.get(digest);
    if (knownTenant !== undefined && ctx.deletedTenants.has(knownTenant)) {
      known.delete(digest);
      knownTenant = undefined;
    }
    const lookup = !admin && knownTenant === undefined;
    const refused = await limits.admit(address, digest, lookup);
    if (refused) throw rateLimited(Math.ceil(refused.waitMs / 1000));
    if (admin) {
      req.caller = { admin: true, tenantId: null };
      return;
    }
    if (knownTenant !== undefined) {
      req.caller = { admin: false, tenantId: knownTenant };
      return;
    }
    let tenantId: string | null;
    try {
      tenantId = await ctx.tenants.findIdByTokenHash(digest);
    } catch (err) {
      // the lookup failed, not the token: no failure to count
      await limits.giveBackFailure(address);
      throw err;
    }
    if (tenantId === null) throw unauthorized('unknown token');
    known.set(digest, tenantId);
    await limits.giveBackFailure(address);
    req.caller = { admin: false, tenantId };
  };
}
