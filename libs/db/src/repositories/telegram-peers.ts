import type { TelegramPeer, TelegramPeerStore } from '@metronome/core';
import type { Kysely } from 'kysely';
import type { DB } from '../types.js';

/** The peers telegram_user accounts learnt, with their access hashes (migrations/0040). */
export class TelegramPeerRepository implements TelegramPeerStore {
  constructor(private readonly db: Kysely<DB>) {}

  async find(accountId: string, chatIdOrUsername: string): Promise<TelegramPeer | null> {
    const username = chatIdOrUsername.replace(/^@/, '').toLowerCase();
    const row = await this.db
      .selectFrom('telegram_peers')
      .select(['chat_id', 'kind', 'access_hash', 'username'])
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('chat_id', '=', chatIdOrUsername), eb('username', '=', username)]))
      // a chat id over a username of the same text (a username never starts with a digit or `-`)
      .orderBy((eb) => eb('chat_id', '=', chatIdOrUsername), 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? { chatId: row.chat_id, kind: row.kind, accessHash: row.access_hash, username: row.username } : null;
  }

  async save(accountId: string, peers: readonly TelegramPeer[], at: Date): Promise<void> {
    if (peers.length === 0) return;
    // one transaction; a username now held by another chat is cleared from the one that had it
    const rows = [...new Map(peers.map((p) => [p.chatId, p])).values()].map((p) => ({
      account_id: accountId,
      chat_id: p.chatId,
      kind: p.kind,
      access_hash: p.accessHash,
      username: p.username,
      learnt_at: at,
    }));
    await this.db.transaction().execute(async (trx) => {
      const names = rows.flatMap((r) => (r.username ? [r.username] : []));
      if (names.length > 0)
        await trx
          .updateTable('telegram_peers')
          .set({ username: null })
          .where('account_id', '=', accountId)
          .where('username', 'in', names)
          .where(
            'chat_id',
            'not in',
            rows.map((r) => r.chat_id),
          )
          .execute();
      await trx
        .insertInto('telegram_peers')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['account_id', 'chat_id']).doUpdateSet((eb) => ({
            kind: eb.ref('excluded.kind'),
            // a basic group has no hash; an answer without one never erases a known one
            access_hash: eb.fn.coalesce('excluded.access_hash', 'telegram_peers.access_hash'),
            username: eb.ref('excluded.username'),
            learnt_at: eb.ref('excluded.learnt_at'),
          })),
        )
        .execute();
    });
  }
}
