import { Api, errors } from 'telegram';
import { classifyUserError } from './user-errors.js';
import { randomIdOf } from './random-id.js';

// What GramJS throws, built as GramJS builds it (RPCMessageToError over Telegram's RpcError).
const request = new Api.messages.SendMessage({ peer: new Api.InputPeerSelf(), message: 'x' });
const rpc = (code: number, message: string) => errors.RPCMessageToError(new Api.RpcError({ errorCode: code, errorMessage: message }), request);

describe('classifyUserError', () => {
  test.each([
    [rpc(420, 'FLOOD_WAIT_30'), { kind: 'account-wait', retryAfterMs: 30_000, code: 'flood_wait' }],
    [rpc(420, 'FLOOD_PREMIUM_WAIT_7'), { kind: 'account-wait', retryAfterMs: 7_000, code: 'flood_wait' }],
    [rpc(420, 'SLOWMODE_WAIT_12'), { kind: 'chat-wait', retryAfterMs: 12_000, code: 'slowmode_wait' }],
    [rpc(400, 'PEER_FLOOD'), { kind: 'account-unavailable', code: 'account_restricted' }],
    [rpc(403, 'CHAT_WRITE_FORBIDDEN'), { kind: 'rejected', code: 'chat_write_forbidden' }],
    [rpc(400, 'USER_BANNED_IN_CHANNEL'), { kind: 'account-unavailable', code: 'account_spam_limited' }],
    [rpc(420, 'FROZEN_METHOD_INVALID'), { kind: 'account-unavailable', code: 'account_frozen' }],
    [rpc(403, 'USER_RESTRICTED'), { kind: 'account-unavailable', code: 'account_restricted' }],
    [rpc(406, 'AUTH_KEY_DUPLICATED'), { kind: 'account-unavailable', code: 'auth_key_duplicated' }],
    [rpc(420, 'FLOOD_TEST_PHONE_WAIT_9'), { kind: 'account-wait', retryAfterMs: 9_000, code: 'flood_wait' }],
    [rpc(403, 'CHAT_SEND_MEDIA_FORBIDDEN'), { kind: 'rejected', code: 'chat_send_media_forbidden' }],
    [rpc(403, 'CHAT_SEND_PLAIN_FORBIDDEN'), { kind: 'rejected', code: 'chat_send_plain_forbidden' }],
    [rpc(400, 'USER_IS_BLOCKED'), { kind: 'rejected', code: 'user_is_blocked' }],
    [rpc(400, 'YOU_BLOCKED_USER'), { kind: 'rejected', code: 'you_blocked_user' }],
    [rpc(400, 'TOPIC_CLOSED'), { kind: 'rejected', code: 'topic_closed' }],
    [rpc(406, 'CHANNEL_PRIVATE'), { kind: 'rejected', code: 'channel_private' }],
    [rpc(400, 'CHAT_ADMIN_REQUIRED'), { kind: 'rejected', code: 'chat_admin_required' }],
    [rpc(400, 'CHAT_RESTRICTED'), { kind: 'rejected', code: 'chat_restricted' }],
    [rpc(401, 'AUTH_KEY_UNREGISTERED'), { kind: 'account-unavailable', code: 'auth_key_unregistered' }],
    [rpc(401, 'SESSION_REVOKED'), { kind: 'account-unavailable', code: 'session_revoked' }],
    [rpc(401, 'USER_DEACTIVATED_BAN'), { kind: 'account-unavailable', code: 'user_deactivated_ban' }],
    [rpc(500, 'RANDOM_ID_DUPLICATE'), { kind: 'retriable', code: 'random_id_in_processing' }],
    [rpc(400, 'PEER_ID_INVALID'), { kind: 'rejected', code: 'chat_not_found' }],
    [rpc(400, 'FILE_REFERENCE_EXPIRED'), { kind: 'rejected', code: 'media_ref_invalid' }],
    [rpc(500, 'INTERNAL'), { kind: 'retriable', code: 'internal' }],
    [new Error('connection closed'), { kind: 'ambiguous', code: 'connection_lost' }],
  ])('%s', (error, expected) => {
    expect(classifyUserError(error)).toMatchObject(expected);
  });
});

test('random_id: the same for a part on every send, another for every other part', () => {
  expect(randomIdOf('run-1:-1001:0').toString()).toBe(randomIdOf('run-1:-1001:0').toString());
  const ids = new Set(['run-1:-1001:0', 'run-1:-1001:1', 'run-1:-1002:0', 'run-2:-1001:0'].map((k) => randomIdOf(k).toString()));
  expect(ids.size).toBe(4);
});
