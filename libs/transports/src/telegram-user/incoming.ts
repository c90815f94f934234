import { chatKey, type TelegramPeerStore } from '@metronome/core';
import { Api } from 'telegram';

/** A text a person wrote to the account in a one-to-one chat (the shape WhatsApp's `IncomingText` has). */
export interface IncomingUserText {
  /** the user's id, and its `@username` as the account compares it (lower case) when the update named one */
  chatIds: string[];
  text: string;
  /** `chatIds` plus the username the account's kept peers know for that user (an `updateShortMessage` names none) */
  allChatIds?: () => Promise<string[]>;
}

/** A user's chat as its account compares chat ids (libs/core chatKey): its id, and `@username` in lower case, which a target names in any case. */
export function userChatIds(userId: string, usernames: readonly (string | null | undefined)[]): string[] {
  return [...new Set([userId, ...usernames.flatMap((u) => (u ? [chatKey('telegram_user', `@${u}`)] : []))])];
}

/**
 * The private text of a message GramJS's NewMessage event built (from `updateShortMessage` or `updateNewMessage`): not
 * outgoing, from a user's one-to-one chat (not a group, a channel or a service message), a text (a media's caption is not).
 */
export function incomingUserText(message: unknown, entities: ReadonlyMap<string, unknown> | undefined): IncomingUserText | null {
  if (!(message instanceof Api.Message) || message.out || !(message.peerId instanceof Api.PeerUser)) return null;
  if (message.media && !(message.media instanceof Api.MessageMediaWebPage)) return null;
  const text = message.message;
  if (typeof text !== 'string' || text.length === 0) return null;
  const userId = message.peerId.userId.toString();
  const user = entities?.get(userId);
  return { chatIds: userChatIds(userId, [user instanceof Api.User ? user.username : null]), text };
}

/** The account's kept peers complete a message's spellings: a campaign that named the user `@name` still matches its reply. */
export function withKeptUsername(accountId: string, message: IncomingUserText, peers: TelegramPeerStore): IncomingUserText {
  const userId = message.chatIds[0]!;
  let all: Promise<string[]> | undefined;
  // asked by the opt-out and the reply alike: one lookup
  const lookUp = async () => {
    const kept = await peers.find(accountId, userId).catch(() => null);
    return [...new Set([...message.chatIds, ...userChatIds(userId, [kept?.username])])];
  };
  return { ...message, allChatIds: () => (all ??= lookUp()) };
}
