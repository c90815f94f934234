import { z } from 'zod';
import { id, pageOf, pageQuery, text, time } from './common.js';

export const createTenantBody = z.strictObject({ name: text(1, 200) });

export const createdTenant = z
  .object({ id, name: z.string(), token: z.string().describe('shown only in this answer'), createdAt: time })
  .meta({ id: 'CreatedTenant' });

export const me = z
  .object({
    tenantId: id.nullable(),
    admin: z.boolean(),
    limits: z
      .object({
        mediaMaxBytes: z.number().int().describe('the largest file POST /v1/media takes (MEDIA_MAX_BYTES); 413 above it'),
        jsonMaxBytes: z.number().int().describe('the largest JSON body a route takes unless it says otherwise; 413 above it'),
      })
      .describe('the request bodies this API takes, so a client can check a file before sending it'),
  })
  .meta({ id: 'Me' });

export const tenant = z.object({ id, name: z.string(), createdAt: time }).meta({ id: 'Tenant' });

export const tenantPage = pageOf(tenant);

export const listTenantsQuery = z.object({ ...pageQuery });
