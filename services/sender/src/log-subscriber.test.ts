import { createLogger } from '@metronome/observability';
import { subscribeLogs } from './log-subscriber.js';
import { senderEvents, type SenderEventMap } from './sender-events.js';

// Each event writes the line the send path wrote itself: level, message and fields, read back
// from pino's JSON in memory.

type Line = Record<string, unknown> & { level: number; msg: string };
const DEBUG = 20;
const INFO = 30;
const WARN = 40;
const ERROR = 50;

function setup(): { events: ReturnType<typeof senderEvents>; lines: Line[] } {
  const lines: Line[] = [];
  const logger = createLogger('sender-test', 'debug', { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
  const events = senderEvents();
  subscribeLogs(events, logger);
  return { events, lines };
}

const part = { runId: 'r1', accountId: 'a1', chatId: 'c1', partIndex: 2 };
type Case = { [K in keyof SenderEventMap]: [K, SenderEventMap[K], number, string, Record<string, unknown>] }[keyof SenderEventMap];

const cases: Case[] = [
  ['job:invalid', { jobId: 'j1', data: { x: 1 } }, ERROR, 'job payload invalid: dropped', { jobId: 'j1', data: { x: 1 } }],
  ['job:outcome', { jobId: 'j1', runId: 'r1', outcome: 'sent', heldMs: 12 }, DEBUG, 'job done', { jobId: 'j1', runId: 'r1', outcome: 'sent', ms: 12 }],
  [
    'send:result',
    { ...part, platform: 'http', outcome: { kind: 'chat-wait', until: 0, code: 'slow_mode', retryAfterMs: 2000 } },
    INFO,
    'chat must wait; other chats go on',
    { ...part, code: 'slow_mode', retryAfterMs: 2000 },
  ],
  [
    'send:result',
    { ...part, platform: 'http', outcome: { kind: 'stop-account', releaseAt: 0, code: 'account_disconnected' } },
    WARN,
    'account unavailable: disconnected, its runs paused',
    { ...part, code: 'account_disconnected' },
  ],
  [
    'send:result',
    { ...part, platform: 'http', outcome: { kind: 'fail', because: 'rejected', code: 'blocked', message: 'no', suppress: true, attempts: 1 } },
    WARN,
    'send failed permanently for this chat',
    { ...part, code: 'blocked', err: 'no' },
  ],
  [
    'send:result',
    { ...part, platform: 'http', outcome: { kind: 'fail', because: 'retries-exhausted', code: 'timeout', message: 'slow', suppress: false, attempts: 4 } },
    WARN,
    'send failed: retries exhausted',
    { ...part, code: 'timeout', err: 'slow', attempts: 4 },
  ],
  [
    'send:result',
    { ...part, platform: 'http', outcome: { kind: 'retry', at: 0, attempts: 2, code: 'timeout', message: 'slow' } },
    WARN,
    'send failed: will retry',
    { ...part, code: 'timeout', err: 'slow', attempts: 2 },
  ],
  [
    'send:result',
    { ...part, platform: 'http', outcome: { kind: 'unknown', code: 'timeout', message: 'lost' } },
    WARN,
    'send outcome unknown: not retried automatically',
    { ...part, code: 'timeout', err: 'lost' },
  ],
  [
    'account:blocked',
    { ...part, code: 'flood_wait', retryAfterMs: 3000 },
    WARN,
    'account must wait: no send from it until the wait ends',
    { ...part, code: 'flood_wait', retryAfterMs: 3000 },
  ],
  [
    'account:cooling',
    { accountId: 'a1', platform: 'http', reason: 'failures', until: Date.parse('2026-06-01T10:00:00Z'), paceFactor: 0.5, words: 'too many failures' },
    WARN,
    'account cooling: too many failures; its runs wait and its pace is lowered',
    { accountId: 'a1', reason: 'failures', until: '2026-06-01T10:00:00.000Z', paceFactor: 0.5 },
  ],
  [
    'account:cap',
    { runId: 'r1', accountId: 'a1', waitMs: 900 },
    INFO,
    "the account's cap is met: the run waits",
    { runId: 'r1', accountId: 'a1', waitMs: 900 },
  ],
  [
    'account:elsewhere',
    { runId: 'r1', accountId: 'a1', reason: 'socket held' },
    DEBUG,
    'account left to another replica for now',
    { runId: 'r1', accountId: 'a1', reason: 'socket held' },
  ],
  ['transport:missing', { runId: 'r1', platform: 'telegram' }, ERROR, 'no transport configured for this platform', { runId: 'r1', platform: 'telegram' }],
  [
    'lease:lost',
    { runId: 'r1', accountId: 'a1', chatId: 'c1' },
    WARN,
    'delivered, but the target lease was lost meanwhile: result not recorded',
    { runId: 'r1', accountId: 'a1', chatId: 'c1' },
  ],
  ['lease:lost', part, WARN, 'delivered, but the target lease was lost meanwhile: result not recorded', part],
  [
    'chat:moved',
    { ...part, code: 'chat_migrated', newChatId: 'c9', moved: 'moved' },
    INFO,
    'chat moved: target renamed, sent again at once',
    { ...part, code: 'chat_migrated', newChatId: 'c9', moved: 'moved' },
  ],
  [
    'chat:moved',
    { ...part, code: 'chat_migrated', newChatId: 'c9', moved: 'skipped' },
    INFO,
    'chat moved to a chat already targeted: skipped',
    { ...part, moved: 'skipped' },
  ],
  [
    'chat:moved',
    { ...part, code: 'chat_migrated', newChatId: 'c9', moved: 'lost' },
    WARN,
    'chat moved, but the target lease was lost meanwhile: not renamed',
    part,
  ],
  ['claim:released', { runId: 'r1', released: 3 }, INFO, 'claims whose answers were lost given back as pending', { runId: 'r1', released: 3 }],
  ['lock:released-late', { accountId: 'a1', afterMs: 750 }, INFO, 'account lock released once Redis answered again', { accountId: 'a1', afterMs: 750 }],
  [
    'answer:written',
    { runId: 'r1', what: 'sent', chatIds: ['c1'], failures: 2 },
    INFO,
    'answer written after the database came back',
    { runId: 'r1', what: 'sent', chatIds: ['c1'], failures: 2 },
  ],
  ['pace:rebuilt', { accountId: 'a1', sends: 7 }, INFO, "account's recent sends rebuilt from PostgreSQL", { accountId: 'a1', sends: 7 }],
  [
    'directory:synced',
    { accountId: 'a1', platform: 'http', status: 'ok', size: 60, heldMs: 40 },
    INFO,
    'chat directory sync ended',
    { accountId: 'a1', platform: 'http', status: 'ok', size: 60, ms: 40 },
  ],
  ['directory:failed', { accountId: 'a1', platform: 'http', error: new Error('bad key') }, WARN, 'chat directory sync failed', { accountId: 'a1' }],
];

// events carrying an error: the line has it as `err` (pino's error serializer)
const failing: Case[] = [
  ['job:error', { jobId: 'j1', runId: 'r1', error: new Error('boom') }, ERROR, 'job failed', { runId: 'r1', jobId: 'j1' }],
  [
    'account:health-lost',
    { accountId: 'a1', error: new Error('boom') },
    WARN,
    "account's health not recorded: this job's sends are left out of automatic cooling",
    { accountId: 'a1' },
  ],
  ['chat:suppress-failed', { ...part, error: new Error('boom') }, WARN, 'chat not added to the suppression list', part],
  ['claim:lost', { runId: 'r1', error: new Error('boom') }, WARN, 'claim failed: the database is away; the job stops claiming', { runId: 'r1' }],
  [
    'answer:held',
    { runId: 'r1', what: 'sent', chatIds: ['c1'], error: new Error('boom') },
    WARN,
    'answer not written: the database is away; holding it and retrying',
    { runId: 'r1', what: 'sent', chatIds: ['c1'] },
  ],
  [
    'answer:lost',
    { runId: 'r1', what: 'sent', chatIds: ['c1'], error: new Error('boom') },
    ERROR,
    'answer not written before the leases ended: the targets expire as unknown',
    { runId: 'r1', what: 'sent', chatIds: ['c1'] },
  ],
  [
    'pace:unsettled',
    { accountId: 'a1', what: 'pace', error: new Error('boom') },
    WARN,
    'pace not settled: the next job keeps the slots reserved so far',
    { accountId: 'a1' },
  ],
  [
    'pace:unsettled',
    { accountId: 'a1', what: 'gap', error: new Error('boom') },
    WARN,
    'gap not settled: the next send keeps the gap reserved with its slot',
    { accountId: 'a1' },
  ],
  ['media:unsaved', { ...part, error: new Error('boom') }, WARN, 'media reference not saved', part],
];

describe('subscribeLogs', () => {
  test.each(cases)('%s writes its line (case %#)', (name, event, level, msg, fields) => {
    const { events, lines } = setup();
    events.emit(name, event as never);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level, msg, service: 'sender-test', ...fields });
  });

  test.each(failing)('%s writes its line with the error (case %#)', (name, event, level, msg, fields) => {
    const { events, lines } = setup();
    events.emit(name, event as never);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level, msg, ...fields, err: { type: 'Error', message: 'boom' } });
  });

  test('a delivered part, a flood wait (its line follows its write) and a moved chat write no line of their own', () => {
    const { events, lines } = setup();
    events.emit('send:result', { ...part, platform: 'http', outcome: { kind: 'sent-last', messageId: 'm', partsSent: 1, latencyMs: 3 } });
    events.emit('send:result', { ...part, platform: 'http', outcome: { kind: 'next-part', messageId: 'm', partsSent: 1 } });
    events.emit('send:result', {
      ...part,
      platform: 'http',
      outcome: { kind: 'account-wait', until: 0, blockedUntil: 0, floodWait: true, code: 'flood_wait', retryAfterMs: 1 },
    });
    events.emit('send:result', { ...part, platform: 'http', outcome: { kind: 'chat-moved', newChatId: 'c9', code: 'chat_migrated' } });
    events.emit('job:start', { jobId: 'j1', waitMs: 5 });
    events.emit('run:first-send', { runId: 'r1', trigger: 'manual', lagMs: 5 });
    expect(lines).toEqual([]);
  });

  test('a part line has no partIndex when the lease was lost on a chat, not a part', () => {
    const { events, lines } = setup();
    events.emit('lease:lost', { runId: 'r1', accountId: 'a1', chatId: 'c1' });
    expect(lines[0]).not.toHaveProperty('partIndex');
  });
});
