import { z } from 'zod';
import { invalidField } from './errors.js';
import { chatId, storableInstant, threadId } from './schemas/common.js';

// Cursors are opaque base64url JSON, checked as strictly as any input: PostgreSQL must never be the first to find a bad instant.

const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const positionSchema = z.strictObject({ at: z.string().regex(AT).refine(isRealInstant), id: z.guid() });
const chatSchema = z.strictObject({ chat: chatId });

// Real when Date, which rolls impossible fields over (Feb 30 → Mar 2), gives back the same fields.
function isRealInstant(at: string): boolean {
  const ms = Date.parse(`${at.slice(0, 19)}Z`);
  return storableInstant(ms) && new Date(ms).toISOString().slice(0, 19) === at.slice(0, 19);
}

export type Position = z.infer<typeof positionSchema>;

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decode<T>(cursor: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidField('cursor', 'not a cursor this API returned');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidField('cursor', 'not a cursor this API returned');
  return parsed.data;
}

export const encodePosition = (p: Position): string => encode({ at: p.at, id: p.id });
export const decodePosition = (cursor: string): Position => decode(cursor, positionSchema);

// A chat directory page ends at (folded title, chat id): the listing's order.
const directorySchema = z.strictObject({ t: z.string().max(2_100), c: chatId });
export const encodeDirectoryCursor = (sortKey: string, chat: string): string => encode({ t: sortKey, c: chat });
export const decodeDirectoryCursor = (cursor: string): { sortKey: string; chatId: string } => {
  const d = decode(cursor, directorySchema);
  return { sortKey: d.t, chatId: d.c };
};

export const encodeChatCursor = (chat: string): string => encode({ chat });
export const decodeChatCursor = (cursor: string): string => decode(cursor, chatSchema).chat;

// A run's targets page ends at (chat id, topic): a chat's topics follow it (migrations/0039).
const targetSchema = z.strictObject({ chat: chatId, thread: threadId.optional() });
export const encodeTargetCursor = (chat: string, thread: number): string => encode(thread ? { chat, thread } : { chat });
export const decodeTargetCursor = (cursor: string): { chatId: string; threadId: number } => {
  const d = decode(cursor, targetSchema);
  return { chatId: d.chat, threadId: d.thread ?? 0 };
};

/** Callers fetch `limit + 1` rows: the extra one only says whether a next page exists. */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (last: T) => string): { rows: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: cursorOf(page[page.length - 1] as T) };
}
