import { invalidField } from './errors.js';

/** Who is calling: the operator (ADMIN_TOKEN) or one tenant. */
export type Caller = { admin: true; tenantId: null } | { admin: false; tenantId: string };

declare module 'fastify' {
  interface FastifyRequest {
    /** set by the auth hook on every /v1 route */
    caller: Caller;
  }
}

export function scopeOf(caller: Caller): string | null {
  return caller.tenantId;
}

/** The caller's own tenant, or the one the operator names; a tenant may not name one (not even its own). */
export function ownerFor(caller: Caller, requested: string | undefined): string {
  if (!caller.admin) {
    if (requested !== undefined) throw invalidField('tenantId', 'only the admin token may set tenantId');
    return caller.tenantId;
  }
  if (requested === undefined) throw invalidField('tenantId', 'required with the admin token: the tenant that owns the resource');
  return requested;
}
