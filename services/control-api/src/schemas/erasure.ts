import { z } from 'zod';
import { chatId, id } from './common.js';

export const deleteAccountQuery = z.object({
  purge: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('true: its runs, their targets and events go now too (default: kept under retention)'),
});

export const eraseChatBody = z.object({
  chatId,
  tenantId: id.optional().describe('admin only: the tenant the chat is erased from'),
});

export const chatErased = z
  .object({
    campaigns: z.number().int().describe('campaigns it was a target of'),
    audienceMembers: z.number().int().describe('audience memberships removed'),
    targets: z.number().int().describe('run targets removed from history'),
    directory: z.number().int().describe('directory entries removed'),
  })
  .meta({ id: 'ChatErased' });

export const exportQuery = z.object({
  tenantId: id.optional().describe('admin only (required then): the tenant to export'),
});
