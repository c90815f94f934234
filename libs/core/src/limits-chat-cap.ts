import { limit } from './limit-entry.js';
import { DAY_MS } from './send-safety.js';

/**
 * A per-chat cap across campaigns (`chatCap`): at most `count` messages to one chat in any rolling day or week, whichever runs send. Reserved with
 * the chat (libs/redis ChatLimits, rebuilt from PostgreSQL after a flush); a chat over it waits with code `chat_cap`.
 */
export const CHAT_CAP = limit({
  key: 'chat_cap',
  waiting: 'chat_cap',
  gate: 'chat',
  phase: null,
  hold: { codes: ['chat_cap'], sentence: (held) => `${held} by the account's cap on messages to one chat (chatCap), whichever campaign sends.` },
  setting: {
    field: 'chatCap',
    label: 'Cap per chat',
    hint: 'at most `count` messages to one chat in any rolling day or week, whichever campaigns send; a chat over it waits',
    parts: [
      { name: 'count', label: 'Messages to one chat', kind: 'int', min: 1, max: 10_000 },
      { name: 'per', label: 'Per', kind: 'choice', values: ['day', 'week'] },
    ],
  },
  chatWindow: (value) => {
    const v = value as { count?: unknown; per?: unknown } | null;
    if (!v || typeof v.count !== 'number' || v.count < 1) return null;
    return { key: 'chat_cap', count: v.count, windowMs: v.per === 'week' ? 7 * DAY_MS : DAY_MS };
  },
});
