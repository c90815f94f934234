/**
 * An account's chat directory (CONTRACT §3, "Chat directory"): the chats the account can see on
 * its platform, kept as a synced copy in PostgreSQL so that listing and searching them never
 * calls the platform. Pure: the transports produce these values, the repository stores them.
 */

/** What kind of chat an entry is. */
export type ChatKind = 'group' | 'direct' | 'channel';

/** Why the account cannot post in a chat. */
export type CannotSendReason =
  | 'announce_only' // only admins may post, and the account is not one
  | 'left' // the account left the group
  | 'removed' // the account was removed from the group
  | 'blocked' // the person blocked the account (or the bot)
  | 'forbidden' // the platform refuses the account's messages there
  | 'not_found'; // the platform no longer knows the chat

/** One entry as a platform describes it. `memberCount` is null where the platform does not tell. */
export interface DirectoryChat {
  chatId: string;
  title: string | null;
  kind: ChatKind;
  memberCount: number | null;
  canSend: boolean;
  /** set exactly when `canSend` is false */
  cannotSendReason: CannotSendReason | null;
}

/** Which entries a complete listing covers: absent, all of the account's. */
export interface DirectoryScope {
  kinds: ChatKind[];
}

/** Where a directory's sync stands, as the account answer shows it. */
export type DirectorySyncState =
  | { status: 'syncing'; synced: number }
  | { status: 'ok'; size: number }
  /** the platform asked to slow down (WhatsApp `rate-overlimit`): retried at `until`; sends go on */
  | { status: 'backing_off'; until: Date; reason: string }
  /** the platform cannot list this account's chats (a bot with its own webhook, an http platform answering 404) */
  | { status: 'unsupported'; reason: string }
  | { status: 'failed'; reason: string };

/**
 * Where a transport writes what it learns of an account's chats. `replaceAll` is a complete
 * listing (entries it lacks are no longer the account's: marked `left`, never deleted, so a
 * run's history keeps its titles); `upsert` adds or replaces entries an event named; `patch`
 * changes some fields of one entry (a rename, an announce-mode switch, a removal).
 * `replaceAll`'s `scope` (an addition) limits the listing to some kinds: WhatsApp lists its
 * groups completely but never its one-to-one chats, whose entries must stay as they are.
 */
export interface ChatDirectorySink {
  replaceAll(accountId: string, chats: DirectoryChat[], at: Date, scope?: DirectoryScope): Promise<void>;
  upsert(accountId: string, chats: DirectoryChat[], at: Date): Promise<void>;
  patch(accountId: string, chatId: string, change: Partial<Omit<DirectoryChat, 'chatId'>>, at: Date): Promise<void>;
  syncState(accountId: string, state: DirectorySyncState, at: Date): Promise<void>;
}

/**
 * A text as the directory search compares it: NFKD with combining marks removed, then
 * lower-cased, so `Café`, `CAFE` and `café` all match `cafe`. The same folding is stored beside
 * each title, so a search is a plain `like` on one column.
 */
export function foldForSearch(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The reason a failed send's error code marks its chat's entry with, or null when it says nothing of the chat. */
export function cannotSendReasonOf(errorCode: string): CannotSendReason | null {
  switch (errorCode) {
    case 'chat_not_found':
      return 'not_found';
    case 'forbidden':
    case 'not_authorized':
      return 'forbidden';
    case 'bot_kicked':
    case 'group_left':
      return 'removed';
    case 'bot_blocked':
      return 'blocked';
    // telegram_user: the chat is gone from the account's view, or a user blocked it
    case 'user_is_blocked':
    case 'you_blocked_user':
      return 'blocked';
    case 'channel_private':
      return 'not_found';
    case 'chat_write_forbidden':
    case 'chat_admin_required':
    case 'chat_restricted':
      return 'forbidden';
    default:
      return null;
  }
}
