import { z } from 'zod';
import { id, text, time } from './common.js';

export const createTenantBody = z.strictObject({ name: text(1, 200) });

export const createdTenant = z
  .object({ id, name: z.string(), token: z.string().describe('shown only in this answer'), createdAt: time })
  .meta({ id: 'CreatedTenant' });

export const me = z.object({ tenantId: id.nullable(), admin: z.boolean() }).meta({ id: 'Me' });
