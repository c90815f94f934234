import type { ChatDirectorySink, DirectoryChat, TelegramPeerStore } from '@metronome/core';
import type { UserClient } from './user-client.js';

/** Dialogs read per sync: the directory of an account with more lists its most recent ones. */
const DIALOG_LIMIT = 2_000;

export async function syncUserDirectory(
  client: UserClient,
  accountId: string,
  sink: ChatDirectorySink,
  at: () => Date,
  peers: TelegramPeerStore,
): Promise<void> {
  await sink.syncState(accountId, { status: 'syncing', synced: 0 }, at());
  const dialogs = await client.dialogs(DIALOG_LIMIT);
  // their access hashes, so every replica can address them after any restart
  await peers.save(
    accountId,
    dialogs.flatMap((d) => (d.peer ? [d.peer] : [])),
    at(),
  );
  const chats = dialogs.map(
    (d): DirectoryChat => ({
      chatId: d.chatId,
      title: d.title,
      kind: d.kind === 'user' ? 'direct' : d.kind,
      memberCount: d.memberCount,
      canSend: d.canSend,
      cannotSendReason: d.canSend ? null : d.kind === 'channel' ? 'announce_only' : 'forbidden',
    }),
  );
  await sink.replaceAll(accountId, chats, at());
  await sink.syncState(accountId, { status: 'ok', size: chats.length }, at());
}
