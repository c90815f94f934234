/** An account's chat directory (CONTRACT §3): a synced copy in PostgreSQL, so listing and searching chats never calls the platform. */

export type ChatKind = 'group' | 'direct' | 'channel';

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
  cannotSendReason: CannotSendReason | null;
}

export interface DirectoryScope {
  kinds: ChatKind[];
}

export type DirectorySyncState =
  | { status: 'syncing'; synced: number }
  | { status: 'ok'; size: number }
  /** the platform asked to slow down (WhatsApp `rate-overlimit`): retried at `until`; sends go on */
  | { status: 'backing_off'; until: Date; reason: string }
  /** the platform cannot list this account's chats (a bot with its own webhook, an http platform answering 404) */
  | { status: 'unsupported'; reason: string }
  | { status: 'failed'; reason: string };

/** Where a transport writes what it learns; `replaceAll` is complete within `scope`: entries it lacks are marked `left`, never deleted. */
export interface ChatDirectorySink {
  replaceAll(accountId: string, chats: DirectoryChat[], at: Date, scope?: DirectoryScope): Promise<void>;
  upsert(accountId: string, chats: DirectoryChat[], at: Date): Promise<void>;
  patch(accountId: string, chatId: string, change: Partial<Omit<DirectoryChat, 'chatId'>>, at: Date): Promise<void>;
  syncState(accountId: string, state: DirectorySyncState, at: Date): Promise<void>;
}

/** NFKD without combining marks, lower-cased (`Café` matches `cafe`); stored beside each title, so a search is a plain `like`. */
export function foldForSearch(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

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
