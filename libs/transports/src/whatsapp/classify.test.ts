import { DisconnectReason } from '@whiskeysockets/baileys';
import { classifyAckError, classifyWhatsAppFailure, CONNECTION_RULES, failureOf, overlimitWaitMs, QUERY_RULES, type WhatsAppFailure } from './classify.js';

// Boom-shaped errors as Baileys throws them: a server error node's code in `data`, the
// socket's own status in `output.statusCode`.
const queryError = (code: number, text: string) => Object.assign(new Error(text), { isBoom: true, data: code, output: { statusCode: 500 } });
const socketError = (statusCode: number) => Object.assign(new Error('Connection Failure'), { isBoom: true, data: { reason: 'x' }, output: { statusCode } });

const cases: [string, WhatsAppFailure, string, string][] = [
  ['rate-overlimit answer', { source: 'query', code: 429, message: 'rate-overlimit' }, 'account-wait', 'rate_overlimit'],
  ['logged out', { source: 'connection', statusCode: DisconnectReason.loggedOut, message: '' }, 'account-unavailable', 'logged_out'],
  ['banned (forbidden)', { source: 'connection', statusCode: DisconnectReason.forbidden, message: '' }, 'account-unavailable', 'account_forbidden'],
  ['connection closed before writing', { source: 'connection', statusCode: DisconnectReason.connectionClosed, message: '' }, 'retriable', 'connection_closed'],
  ['connection lost mid-way', { source: 'connection', statusCode: DisconnectReason.connectionLost, message: '' }, 'ambiguous', 'connection_lost'],
  [
    'replaced by another connection',
    { source: 'connection', statusCode: DisconnectReason.connectionReplaced, message: '' },
    'account-wait',
    'connection_replaced',
  ],
  ['restart required', { source: 'connection', statusCode: DisconnectReason.restartRequired, message: '' }, 'retriable', 'restart_required'],
  ['bad session', { source: 'connection', statusCode: DisconnectReason.badSession, message: '' }, 'retriable', 'bad_session'],
  ['unknown close', { source: 'connection', statusCode: 499, message: '' }, 'retriable', 'connection_499'],
  ['group not found', { source: 'query', code: 404, message: 'item-not-found' }, 'rejected', 'chat_not_found'],
  ['not allowed in the group', { source: 'query', code: 403, message: 'forbidden' }, 'rejected', 'forbidden'],
  ['other 4xx answer', { source: 'query', code: 409, message: 'conflict' }, 'rejected', 'error_409'],
  ['server error answer', { source: 'query', code: 500, message: 'internal-server-error' }, 'retriable', 'server_error'],
  ['timeout after hand-over', { source: 'timeout', message: '' }, 'ambiguous', 'timeout'],
  ['unreadable failure after hand-over', { source: 'unknown', message: 'TypeError' }, 'ambiguous', 'send_failed'],
];

test.each(cases)('%s', (_name, failure, kind, code) => {
  const result = classifyWhatsAppFailure(failure);
  expect(result.kind).toBe(kind);
  expect(result.code).toBe(code);
});

test('rate-overlimit backs off longer on every repeat, up to a cap', () => {
  const waits = [1, 2, 3, 4, 5, 6, 7, 50].map((streak) => overlimitWaitMs(streak));
  expect(waits.slice(0, 6)).toEqual([60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000]);
  expect(waits[7]).toBe(1_800_000);
  const third = classifyWhatsAppFailure({ source: 'query', code: 429, message: 'rate-overlimit' }, 3);
  expect(third).toEqual({ kind: 'account-wait', code: 'rate_overlimit', retryAfterMs: 240_000 });
  expect(overlimitWaitMs(2, { baseMs: 1000, maxMs: 1500 })).toBe(1500);
});

test('errors are read by their codes, never by their text', () => {
  expect(failureOf(queryError(429, 'rate-overlimit'))).toEqual({ source: 'query', code: 429, message: 'rate-overlimit' });
  // the same text on a socket error does not make it a rate limit
  expect(failureOf(Object.assign(socketError(DisconnectReason.loggedOut), { message: 'rate-overlimit' }))).toMatchObject({
    source: 'connection',
    statusCode: 401,
  });
  expect(failureOf(new Error('rate-overlimit'))).toEqual({ source: 'unknown', message: 'rate-overlimit' });
  expect(failureOf('boom')).toEqual({ source: 'unknown', message: 'boom' });
});

// One row per status a Baileys socket can close with or throw (DisconnectReason, a `failure`
// node's reason, Boom statuses of its own): what a send written to the socket becomes, and
// what it becomes when the failure came before the write (nothing sent: never unknown).
const connectionRows: [number, string, string, string][] = [
  [401, 'account-unavailable', 'logged_out', 'account-unavailable'],
  [403, 'account-unavailable', 'account_forbidden', 'account-unavailable'],
  [405, 'account-unavailable', 'client_outdated', 'account-unavailable'],
  [408, 'ambiguous', 'connection_lost', 'retriable'],
  [411, 'account-unavailable', 'multidevice_mismatch', 'account-unavailable'],
  [419, 'account-unavailable', 'account_unauthorized', 'account-unavailable'],
  [428, 'retriable', 'connection_closed', 'retriable'],
  [429, 'account-wait', 'rate_overlimit', 'account-wait'],
  [440, 'account-wait', 'connection_replaced', 'account-wait'],
  [500, 'retriable', 'bad_session', 'retriable'],
  [503, 'retriable', 'service_unavailable', 'retriable'],
  [515, 'retriable', 'restart_required', 'retriable'],
];

test('the table has a row for every DisconnectReason, and this test a row for every table entry', () => {
  for (const code of Object.values(DisconnectReason).filter((v): v is number => typeof v === 'number')) expect(CONNECTION_RULES[code]).toBeDefined();
  expect(connectionRows.map((r) => r[0]).sort()).toEqual(Object.keys(CONNECTION_RULES).map(Number).sort());
});

test.each(connectionRows)('socket status %i: %s %s after the write, %s before it', (status, kind, code, beforeWrite) => {
  const failure = failureOf(socketError(status));
  expect(classifyWhatsAppFailure(failure)).toMatchObject({ kind, code });
  expect(classifyWhatsAppFailure(failure, 1, undefined, false).kind).toBe(beforeWrite);
});

test("Baileys' query timeout (Boom 408 `Timed Out`, data: its stack) before the write is retried as timed_out", () => {
  const timedOut = Object.assign(new Error('Timed Out'), { isBoom: true, data: { stack: 'at query' }, output: { statusCode: DisconnectReason.timedOut } });
  expect(classifyWhatsAppFailure(failureOf(timedOut), 1, undefined, false)).toMatchObject({ kind: 'retriable', code: 'timed_out' });
});

const queryRows: [number, string, string][] = [
  [400, 'rejected', 'bad_request'],
  [401, 'rejected', 'not_authorized'],
  [403, 'rejected', 'forbidden'],
  [404, 'rejected', 'chat_not_found'],
  [406, 'rejected', 'not_acceptable'],
  [408, 'ambiguous', 'timeout'],
  [429, 'account-wait', 'rate_overlimit'],
  [500, 'retriable', 'server_error'],
  [503, 'retriable', 'service_unavailable'],
];

test('this test has a row for every server error code of the table', () => {
  expect(queryRows.map((r) => r[0]).sort()).toEqual(Object.keys(QUERY_RULES).map(Number).sort());
});

test.each(queryRows)('server error node %i: %s %s', (code, kind, name) => {
  expect(classifyWhatsAppFailure(failureOf(queryError(code, 'x')))).toMatchObject({ kind, code: name });
});

test.each([
  [463, 'new-chat-refused', 'new_chat_refused'],
  [479, 'rejected', 'message_invalid'],
  [480, 'ambiguous', 'ack_error_480'],
])('server ERROR ack %i after the write: %s %s', (code, kind, name) => {
  expect(classifyAckError(code)).toEqual({ kind, code: name });
});
