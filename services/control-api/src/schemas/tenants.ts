import { z } from 'zod';
import { id, pageOf, pageQuery, text, time } from './common.js';

export const createTenantBody = z.strictObject({ name: text(1, 200) });

export const createdTenant = z
  .object({ id, name: z.string(), token: z.string().describe('shown only in this answer'), createdAt: time })
  .meta({ id: 'CreatedTenant' });

export const me = z.object({ tenantId: id.nullable(), admin: z.boolean() }).meta({ id: 'Me' });

export const tenant = z.object({ id, name: z.string(), createdAt: time }).meta({ id: 'Tenant' });

export const tenantPage = pageOf(tenant);

export const listTenantsQuery = z.object({ ...pageQuery });
