import { foldForSearch, targetKey } from '@metronome/core';
import { AudienceMemberRepository, type DB, type MemberWrite } from '@metronome/db';
import type { Kysely } from 'kysely';
import type { MemberInput } from './audience-csv.js';

/** Statements per upload: 100,000 members go in four statements of one transaction. */
const UPSERT_BATCH = 25_000;
/** No query can hold it. */
const SEARCH_SEPARATOR = '\u001f';

/** The members with each (chat, topic) once, a repeated one taking the later entry's variables. */
export function mergeRepeats(members: { chatId: string; threadId?: number | undefined; vars?: Record<string, string> | null | undefined }[]): MemberInput[] {
  const byChat = new Map<string, MemberInput>();
  for (const m of members) {
    const key = targetKey(m.chatId, m.threadId);
    byChat.delete(key);
    const vars = m.vars && Object.keys(m.vars).length > 0 ? m.vars : null;
    byChat.set(key, m.threadId ? { chatId: m.chatId, threadId: m.threadId, vars } : { chatId: m.chatId, vars });
  }
  return [...byChat.values()];
}

export function memberWrite(m: MemberInput): MemberWrite {
  const parts = [m.chatId, ...Object.values(m.vars ?? {})].map(foldForSearch);
  return { chatId: m.chatId, ...(m.threadId && { threadId: m.threadId }), vars: m.vars, search: parts.join(SEARCH_SEPARATOR) };
}

/** In batches, inside the caller's transaction (all or nothing). */
export async function upsertMembers(trx: Kysely<DB>, audienceId: string, members: MemberInput[], now: Date): Promise<{ added: number; updated: number }> {
  const repo = new AudienceMemberRepository(trx);
  const total = { added: 0, updated: 0 };
  for (let i = 0; i < members.length; i += UPSERT_BATCH) {
    const done = await repo.upsert(audienceId, members.slice(i, i + UPSERT_BATCH).map(memberWrite), now);
    total.added += done.added;
    total.updated += done.updated;
  }
  return total;
}
