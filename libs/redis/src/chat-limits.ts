import type { RedisKeys } from './keys.js';
import { scriptReplies } from './script-replies.js';
import type { ScriptCommands } from './scripts.js';

export interface ChatWindowArgs {
  key: string;
  count: number;
  windowMs: number;
}

export interface ChatSend {
  chatId: string;
  runId: string;
  at: number;
}

export type ChatReservation = { reserved: true } | { reserved: false; limitedBy: string; waitMs: number } | { reserved: false; lockLost: true };

export const CHAT_SENDS_KEEP_MS = 7 * 86_400_000;
const SEED_CHUNK = 200;

export const chatReserveReplies = scriptReplies<{ reserved: true } | { reserved: false; window: number; waitMs: number } | 'rebuild' | 'lock-lost'>(
  'chat-limits-reserve-3',
  {
    OK: () => ({ reserved: true }),
    CAP_MET: (waitMs, more) => ({ reserved: false, window: more[0] ?? 1, waitMs }),
    REBUILD: () => 'rebuild',
    NOT_HOLDER: () => 'lock-lost',
  },
);
export const chatSeedReplies = scriptReplies('chat-limits-seed-2', { OK: () => true, NOT_HOLDER: () => false });
export const chatSeededReplies = scriptReplies('chat-limits-seeded-2', { OK: () => true, NOT_HOLDER: () => false });

/** The account's chat windows in Redis (lua/chat-limits-*), one round trip per message; after Redis lost them, the last week is put back from `load`. */
export class ChatLimits {
  constructor(
    private readonly scripts: ScriptCommands,
    private readonly keys: RedisKeys,
  ) {}

  async reserve(
    accountId: string,
    lockToken: string,
    nowMs: number,
    chatId: string,
    runId: string,
    windows: readonly ChatWindowArgs[],
    load: (since: Date) => Promise<ChatSend[]>,
  ): Promise<ChatReservation> {
    if (windows.length === 0) return { reserved: true };
    const ask = () =>
      this.scripts.run(
        chatReserveReplies,
        [this.keys.chatSends(accountId, chatId), this.keys.accountLock(accountId), this.keys.chatSendsSeeded(accountId)],
        [nowMs, lockToken, runId, CHAT_SENDS_KEEP_MS, ...windows.flatMap((w) => [w.count, w.windowMs])],
      );
    let answer = await ask();
    if (answer === 'rebuild') {
      if (!(await this.rebuild(accountId, lockToken, await load(new Date(nowMs - CHAT_SENDS_KEEP_MS))))) return { reserved: false, lockLost: true };
      answer = await ask();
    }
    if (answer === 'rebuild' || answer === 'lock-lost') return { reserved: false, lockLost: true };
    if (answer.reserved) return answer;
    return { reserved: false, limitedBy: windows[answer.window - 1]!.key, waitMs: answer.waitMs };
  }

  async rebuild(accountId: string, lockToken: string, sends: readonly ChatSend[]): Promise<boolean> {
    const byChat = new Map<string, (string | number)[]>();
    for (const s of sends) byChat.set(s.chatId, [...(byChat.get(s.chatId) ?? []), s.at, s.runId]);
    const chats = [...byChat];
    for (let i = 0; i < chats.length; i += SEED_CHUNK) {
      const done = await Promise.all(
        chats
          .slice(i, i + SEED_CHUNK)
          .map(([chatId, pairs]) =>
            this.scripts.run(
              chatSeedReplies,
              [this.keys.chatSends(accountId, chatId), this.keys.accountLock(accountId)],
              [lockToken, CHAT_SENDS_KEEP_MS, ...pairs],
            ),
          ),
      );
      if (done.includes(false)) return false;
    }
    return this.scripts.run(chatSeededReplies, [this.keys.chatSendsSeeded(accountId), this.keys.accountLock(accountId)], [lockToken, CHAT_SENDS_KEEP_MS]);
  }
}
