import { hashToken, sameDigest } from '@metronome/core';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { ApiContext } from './context.js';
import { rateLimited, unauthorized } from './errors.js';
import type { AuthLimiter } from './rate-limiter.js';

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,1024})[ \t]*$/i;

/** `newToken()`'s shape (`mtr_` and 24 random bytes base64url): anything else is refused without a lookup. */
export const TENANT_TOKEN = /^mtr_[A-Za-z0-9_-]{32}$/;

/** A token never changes its tenant; this bounds how long a deleted one is still taken by a replica that saw it. */
export const KNOWN_TOKEN_MS = 60_000;

export const failureKey = (address: string): string => `auth-failures:${address}`;

/**
 * Identifies the caller from `Authorization: Bearer`, or 401/429. A token to be looked up spends one of its address's failure
 * allowance first, given back when it proves valid, so a burst cannot look up more than AUTH_FAILURES_PER_MINUTE. The admin
 * token is compared as a digest in constant time; a valid tenant token is remembered for KNOWN_TOKEN_MS (one Redis call).
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
