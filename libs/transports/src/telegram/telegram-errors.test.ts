import { classifyBotApiError, isPrivateChat, type BotApiError } from './telegram-errors.js';

// `written`: most answers come after the whole request was sent
const err = (status: number, description: string | null, parameters: BotApiError['parameters'] = null, written = true): BotApiError => ({
  status,
  description,
  parameters,
  written,
});
const GROUP = '-1001234567890';
const PRIVATE = '123456789';

describe('classifyBotApiError', () => {
  test.each<[string, BotApiError, string, Record<string, unknown>]>([
    // 429: who waits depends on the chat (docs/platforms.md)
    [
      '429 in a group: that chat waits',
      err(429, 'Too Many Requests: retry after 35', { retry_after: 35 }),
      GROUP,
      { kind: 'chat-wait', retryAfterMs: 35_000, code: 'chat_flood_wait' },
    ],
    [
      '429 in a channel named by @username: that chat waits',
      err(429, 'Too Many Requests: retry after 3', { retry_after: 3 }),
      '@news',
      { kind: 'chat-wait', retryAfterMs: 3_000, code: 'chat_flood_wait' },
    ],
    [
      '429 in a group longer than any per-group limit: the bot waits',
      err(429, 'Too Many Requests: retry after 300', { retry_after: 300 }),
      GROUP,
      { kind: 'account-wait', retryAfterMs: 300_000, code: 'flood_wait' },
    ],
    [
      '429 in a private chat: the bot waits',
      err(429, 'Too Many Requests: retry after 7', { retry_after: 7 }),
      PRIVATE,
      { kind: 'account-wait', retryAfterMs: 7_000, code: 'flood_wait' },
    ],
    [
      '429 without retry_after: a default wait',
      err(429, 'Too Many Requests', null),
      PRIVATE,
      { kind: 'account-wait', retryAfterMs: 5_000, code: 'flood_wait' },
    ],
    // migration is read from parameters, not from the description
    [
      'group upgraded to a supergroup',
      err(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: -1009876543210 }),
      '-4567',
      { kind: 'chat-moved', newChatId: '-1009876543210', code: 'chat_migrated' },
    ],
    [
      'migrate_to_chat_id whatever the description',
      err(400, null, { migrate_to_chat_id: -100555 }),
      '-4567',
      { kind: 'chat-moved', newChatId: '-100555', code: 'chat_migrated' },
    ],
    // the account
    ['401: token revoked', err(401, 'Unauthorized'), GROUP, { kind: 'account-unavailable', code: 'account_unauthorized' }],
    ['404: token malformed', err(404, 'Not Found'), GROUP, { kind: 'account-unavailable', code: 'bot_token_invalid' }],
    // the description table
    ['kicked from a group', err(403, 'Forbidden: bot was kicked from the group chat'), GROUP, { kind: 'rejected', code: 'bot_kicked' }],
    ['kicked from a supergroup', err(403, 'Forbidden: bot was kicked from the supergroup chat'), GROUP, { kind: 'rejected', code: 'bot_kicked' }],
    ['blocked by the user', err(403, 'Forbidden: bot was blocked by the user'), PRIVATE, { kind: 'rejected', code: 'bot_blocked' }],
    ['user deactivated', err(403, 'Forbidden: user is deactivated'), PRIVATE, { kind: 'rejected', code: 'user_deactivated' }],
    ['not a member of a channel', err(403, 'Forbidden: bot is not a member of the channel chat'), '@news', { kind: 'rejected', code: 'bot_not_member' }],
    ["can't initiate", err(403, "Forbidden: bot can't initiate conversation with a user"), PRIVATE, { kind: 'rejected', code: 'bot_cannot_initiate' }],
    ['chat not found', err(400, 'Bad Request: chat not found'), GROUP, { kind: 'rejected', code: 'chat_not_found' }],
    ['a bot as the chat', err(403, "Forbidden: bot can't send messages to bots"), PRIVATE, { kind: 'rejected', code: 'chat_is_bot' }],
    ['group deleted', err(403, 'Forbidden: the group chat was deleted'), GROUP, { kind: 'rejected', code: 'chat_deleted' }],
    ['group deactivated', err(400, 'Bad Request: group chat was deactivated'), GROUP, { kind: 'rejected', code: 'chat_deleted' }],
    ['no rights', err(400, 'Bad Request: not enough rights to send text messages to the chat'), GROUP, { kind: 'rejected', code: 'no_rights' }],
    ['write forbidden', err(400, 'Bad Request: CHAT_WRITE_FORBIDDEN'), GROUP, { kind: 'rejected', code: 'no_rights' }],
    ['a file_id of another bot', err(400, 'Bad Request: wrong file identifier/HTTP URL specified'), GROUP, { kind: 'rejected', code: 'media_ref_invalid' }],
    [
      "a file_id sent with another kind's method",
      err(400, "Bad Request: can't use file of type Animation as Video"),
      GROUP,
      { kind: 'rejected', code: 'media_ref_invalid' },
    ],
    ['a photo Telegram cannot read', err(400, 'Bad Request: IMAGE_PROCESS_FAILED'), GROUP, { kind: 'rejected', code: 'image_invalid' }],
    ['a photo of bad dimensions', err(400, 'Bad Request: PHOTO_INVALID_DIMENSIONS'), GROUP, { kind: 'rejected', code: 'image_invalid' }],
    [
      'a photo over 10 MB',
      err(400, 'Bad Request: file of size 11000000 bytes is too big for a photo; the maximum size is 10485760 bytes'),
      GROUP,
      { kind: 'rejected', code: 'photo_too_large' },
    ],
    ['too long', err(400, 'Bad Request: message is too long'), GROUP, { kind: 'rejected', code: 'message_too_long' }],
    ['caption too long', err(400, 'Bad Request: message caption is too long'), GROUP, { kind: 'rejected', code: 'message_too_long' }],
    ['case does not matter', err(403, 'FORBIDDEN: BOT WAS KICKED FROM THE GROUP CHAT'), GROUP, { kind: 'rejected', code: 'bot_kicked' }],
    // the status bounds a row: "bot was kicked" is only ever a 403
    ['a row applies to its status only', err(400, 'Bad Request: bot was kicked'), GROUP, { kind: 'rejected', code: 'invalid_request' }],
    // everything else
    ['another 403', err(403, 'Forbidden: something new'), GROUP, { kind: 'rejected', code: 'forbidden' }],
    ['another 400', err(400, "Bad Request: can't parse entities"), GROUP, { kind: 'rejected', code: 'invalid_request' }],
    ['413', err(413, 'Request Entity Too Large'), GROUP, { kind: 'rejected', code: 'invalid_request' }],
    // a 5xx to a request sent whole: Telegram may have posted it
    ['500 after the request was written', err(500, 'Internal Server Error'), GROUP, { kind: 'ambiguous', code: 'http_500' }],
    ['502 from a proxy, no JSON, after the request was written', err(502, null), GROUP, { kind: 'ambiguous', code: 'http_502' }],
    ['503 before the request was all written', err(503, null, null, false), GROUP, { kind: 'retriable', code: 'http_503' }],
    ['408 after the request was written: Telegram did not read it whole', err(408, 'Request Timeout'), GROUP, { kind: 'retriable', code: 'http_408' }],
  ])('%s', (_name, error, chatId, expected) => {
    expect(classifyBotApiError(error, chatId)).toMatchObject(expected);
  });

  test('the message carries the status and Telegram description', () => {
    const r = classifyBotApiError(err(403, 'Forbidden: bot was blocked by the user'), PRIVATE);
    expect(r).toEqual({ kind: 'rejected', code: 'bot_blocked', message: 'Telegram answered 403: Forbidden: bot was blocked by the user' });
  });
});

describe('isPrivateChat', () => {
  test.each([
    ['123456789', true],
    ['-123456', false],
    ['-1001234567890', false],
    ['@channel', false],
    ['0', false],
    ['12a', false],
  ])('%s → %s', (chatId, expected) => {
    expect(isPrivateChat(chatId)).toBe(expected);
  });
});
