import type { DirectoryEntryRow, DirectorySyncRow } from '@metronome/db';
import { z } from 'zod';
import { chatId, id, isoOrNull, iso, pageOf, pageQuery, text, time } from './common.js';

// The chat directory (CONTRACT §3, "Chat directory"): an account's chats, synced from its platform.

const kind = z.enum(['group', 'direct', 'channel']);
const cannotSendReason = z
  .enum(['announce_only', 'left', 'removed', 'blocked', 'forbidden', 'not_found'])
  .describe('announce_only (only admins post), left, removed, blocked, forbidden, not_found');

export const listChatsQuery = z.object({
  query: text(1, 200).optional().describe('title or chat id contains it, any case, accents folded'),
  kind: kind.optional(),
  canSend: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('true: chats the account can post in; false: those it cannot'),
  ...pageQuery,
  // a page ends at a title and a chat id, each up to 256 characters of any script
  cursor: z.string().min(1).max(8_192).optional().describe('nextCursor of the previous page'),
});

export const directoryEntry = z
  .object({
    chatId: z.string(),
    title: z.string().nullable(),
    kind,
    memberCount: z.number().int().nullable().describe('null where the platform does not tell'),
    canSend: z.boolean(),
    cannotSendReason: cannotSendReason.nullable().describe('set exactly when canSend is false'),
    lastSyncAt: time.describe('when the platform last described this chat'),
  })
  .meta({ id: 'DirectoryChat' });
export const directoryPage = pageOf(directoryEntry);

export const directoryState = z
  .object({
    status: z
      .enum(['never', 'syncing', 'ok', 'backing_off', 'unsupported', 'failed'])
      .describe(
        'never: not synced yet; syncing; ok; backing_off: the platform asked to slow down (retried at `until`); unsupported: the platform cannot list chats; failed',
      ),
    synced: z.number().int().describe('entries listed: so far while syncing; by the whole listing once ok'),
    size: z.number().int().describe('entries in the directory'),
    lastSyncAt: time.nullable().describe('the end of the latest complete sync'),
    until: time.nullable().describe('backing_off: when the sync is retried'),
    reason: z.string().nullable().describe('backing_off, unsupported, failed: why'),
  })
  .meta({ id: 'DirectoryState' });

export const NEVER_SYNCED: z.output<typeof directoryState> = { status: 'never', synced: 0, size: 0, lastSyncAt: null, until: null, reason: null };

export const chatParams = z.object({ id });
export { chatId };

export function directoryStateView(s: DirectorySyncRow | null): z.output<typeof directoryState> {
  if (!s) return NEVER_SYNCED;
  return { status: s.status, synced: s.synced, size: s.size, lastSyncAt: isoOrNull(s.lastSyncAt), until: isoOrNull(s.until), reason: s.reason };
}

export function directoryEntryView(e: DirectoryEntryRow): z.output<typeof directoryEntry> {
  return {
    chatId: e.chatId,
    title: e.title,
    kind: e.kind,
    memberCount: e.memberCount,
    canSend: e.canSend,
    cannotSendReason: e.cannotSendReason,
    lastSyncAt: iso(e.lastSyncAt),
  };
}
