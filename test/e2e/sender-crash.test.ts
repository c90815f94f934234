import { startService, type ServiceProcess } from '@metronome/testkit';
import { paceBreaches, received, repeats, senderEnvFor, startFanOut } from '../helpers/platform-record.js';
import { sandbox, startStack, type SandboxMessage, type Stack, runsToEnd } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// Never twice, nothing lost, `unknown` only where the platform had a request unanswered, with
// real processes: three senders fan 2,000 chats out over 20 accounts at 600 a minute each (the
// platform answering in 30 ms) while one of them is killed with SIGKILL five times (at least
// three where the fan-out nears its end first) and started again each time. The sandbox's
// record is the judge. Half the accounts' platform deduplicates (`platformDeduplicates`, the
// sandbox answering a repeated Idempotency-Key as the first time):
// theirs end with no chat `unknown`, each doubtful send settled by a re-send with the same key.

const SENDER_CONCURRENCY = 4;
const GROUP_CONCURRENCY = 3;
const ACCOUNTS = 20;
const CHATS_PER_ACCOUNT = 100;
const PER_MINUTE = 600;
const KILLS = 5;
// An answer the platform wrote just before a kill may not have been read and recorded yet
// (read it, write it to PostgreSQL, commit): such a send is unknown too. This bounds that time:
// seen 359 ms with three test files and a benchmark beside this one (load 14-16), so a second,
// as for the request's write below.
const ANSWER_RECORD_MS = 1_000;
// The test notes a kill's time just before it signals: a request the sender wrote before it died
// can still reach the platform a little after that time (the signal's delivery, the socket's
// buffer, the platform's event loop). Seen: received 2 ms after the noted time, on a loaded machine.
// Such a request was in flight at the kill; nothing else can send that chat once it is `unknown`.
const KILL_LANDS_MS = 250;

// One part; a short send timeout and hold keep what a killed sender leaves behind short: its
// leases (the send timeout plus SENDER_HOLD_MS), its account locks and its BullMQ jobs.
const senderEnv = { SENDER_CONCURRENCY: String(SENDER_CONCURRENCY), SEND_TIMEOUT_MS: '2000', SENDER_HOLD_MS: '10000' };

let stack: Stack;
const restarted: ServiceProcess[] = [];
beforeAll(async () => {
  stack = await startStack({ senders: 3, senderEnv, sandboxEnv: { SANDBOX_LATENCY_MS: '30' } });
}, 60_000);
afterAll(async () => {
  await Promise.all(restarted.map((s) => s.stop()));
  await stack?.stop();
}, 60_000);

function startSender(n: number): ServiceProcess {
  return startService(`sender-restarted-${n}`, 'services/sender/dist/main.js', senderEnvFor(stack, senderEnv));
}

// The other edge of a send: its stamp (`send_started_at`) commits, then the request is written.
// A kill between the two leaves a send marked begun that never reached the platform; nothing
// can tell the two apart afterwards (the platform is not asked), so it is `unknown` too. This
// bounds that gap. The stamp is the claim statement's time, taken before the statement waits for
// a pooled connection, its round trip and commit, and the event-loop turn before the write: seen
// 315 ms with two test files beside this one at load 9, so a second.
const REQUEST_WRITE_MS = 1_000;

/**
 * Whether the platform had a request for this chat that was received and not (yet recordably)
 * answered at one of the kills. A request may have come up to its `stampSlackMs` before the
 * sandbox stamped it (its loop was held up): the earliest it can have come is what counts.
 */
function inFlightAtAKill(messages: SandboxMessage[], kills: number[]): boolean {
  return messages.some((m) =>
    kills.some((k) => m.receivedAt - m.stampSlackMs <= k + KILL_LANDS_MS && (m.answeredAt === null || m.answeredAt >= k - ANSWER_RECORD_MS)),
  );
}

/** Whether a send with no request at the platform had been stamped as begun just before a kill. */
function beingWrittenAtAKill(sendStartedAt: Date | null, kills: number[]): boolean {
  return sendStartedAt !== null && kills.some((k) => sendStartedAt.getTime() <= k + KILL_LANDS_MS && sendStartedAt.getTime() >= k - REQUEST_WRITE_MS);
}

test('kill -9 of one of three senders, up to five times, mid fan-out: nothing twice, nothing lost, unknown only where the platform had a request unanswered', async () => {
  // 600 a minute: each account's 100 chats take ~10 s, so the kills land mid fan-out
  const deduplicating = (a: number) => a % 2 === 0;
  const { token, runIds } = await startFanOut(stack, {
    name: 'crash',
    accounts: ACCOUNTS,
    chats: CHATS_PER_ACCOUNT,
    perMinute: PER_MINUTE,
    groupConcurrency: GROUP_CONCURRENCY,
    platformDeduplicates: deduplicating,
  });
  const settlingRuns = new Set(runIds.filter((_, a) => deduplicating(a)));

  // Kill the same replica slot each time, as soon as it is sending again.
  let victim = stack.senders[0]!;
  const kills: number[] = [];
  for (let k = 0; k < KILLS; k++) {
    const accepted = (await sandbox(stack, '/sandbox/stats')).accepted as number;
    // wait until the fan-out has moved on (and, after a restart, the new replica is working); on a
    // loaded machine the other replicas can near its end first (restarts are slow): no kill can
    // then land mid fan-out, and the ones made are judged
    const nearEnd = (n: number) => n >= ACCOUNTS * CHATS_PER_ACCOUNT - 50;
    let now = accepted;
    await eventually(
      'sends to go on',
      async () => {
        now = (await sandbox(stack, '/sandbox/stats')).accepted as number;
        return now > accepted + 50 || nearEnd(now);
      },
      120_000,
      50,
    );
    if (nearEnd(now) && k >= 2) break;
    kills.push(Date.now());
    victim.child.kill('SIGKILL');
    await victim.stop();
    victim = startSender(k + 1);
    restarted.push(victim);
    await victim.waitForLog((l) => l['msg'] === 'sender ready');
  }

  // Every run finishes: the killed replica's leases expire and its runs' jobs come back.
  const runs = await runsToEnd(stack, token, runIds, 240_000, 500);

  // Zero repeats at the platform: by (account, chat, part) it delivered; a repeated key it
  // answered without delivering only from the accounts whose platform deduplicates.
  const { items: repeatedKeys } = await sandbox<{ items: { account: string }[] }>(stack, '/sandbox/duplicates');
  expect(repeatedKeys.filter((d) => !deduplicating(Number(d.account.split('-')[1])))).toEqual([]);
  const items = await received(stack);
  expect(repeats(items)).toEqual([]);

  const targets = await stack.db.db
    .selectFrom('run_targets')
    .select(['run_id', 'chat_id', 'status', 'send_started_at', 'error_code', 'ambiguous_at'])
    .execute();
  // Where the platform deduplicates, no chat stays unknown: each doubtful send was sent again with its key.
  const settling = targets.filter((t) => settlingRuns.has(t.run_id));
  expect(settling.filter((t) => t.status !== 'sent')).toEqual([]);
  const settled = settling.filter((t) => t.ambiguous_at !== null);
  expect(targets.filter((t) => t.ambiguous_at !== null && !settlingRuns.has(t.run_id))).toEqual([]);
  console.log(`settled by the platform: ${settled.length} chats of the accounts that deduplicate (${repeatedKeys.length} repeated keys answered)`);

  // Elsewhere, `unknown` only where the platform had a request unanswered at a kill; every other target sent.
  const byChat = new Map<string, SandboxMessage[]>();
  for (const m of items) byChat.set(m.chatId, [...(byChat.get(m.chatId) ?? []), m]);
  const unknown = targets.filter((t) => t.status === 'unknown');
  const atPlatform = unknown.filter((t) => inFlightAtAKill(byChat.get(t.chat_id) ?? [], kills));
  const beingWritten = unknown.filter((t) => !byChat.has(t.chat_id) && beingWrittenAtAKill(t.send_started_at, kills));
  // A request written and not answered within SEND_TIMEOUT_MS (a replica that lived, on a busy
  // machine) is `unknown` by the same rule: it must have reached the platform.
  const timedOut = unknown.filter((t) => t.error_code === 'timeout' && byChat.has(t.chat_id));
  const unexplained = unknown.filter((t) => !atPlatform.includes(t) && !beingWritten.includes(t) && !timedOut.includes(t));
  // what a failure needs to be read: the code the target was left with, its requests, all against the kills
  const sinceKills = (at: number) => kills.map((k) => at - k);
  expect(
    unexplained.map((t) => ({
      chat: t.chat_id,
      code: t.error_code,
      sendStartedAt: t.send_started_at === null ? null : sinceKills(t.send_started_at.getTime()),
      requests:
        byChat
          .get(t.chat_id)
          ?.map((m) => ({ received: sinceKills(m.receivedAt), slack: m.stampSlackMs, answered: m.answeredAt === null ? null : sinceKills(m.answeredAt) })) ??
        [],
    })),
  ).toEqual([]);
  // the second kind needs a kill to land in a gap of a few milliseconds: reported, not bounded
  console.log(
    `unknown: ${atPlatform.length} in flight at the platform at a kill, ${beingWritten.length} stamped and not yet written at a kill, ${timedOut.length} timed out`,
  );
  // per kill, no more than one replica could have had in flight: its jobs × their lanes
  expect(unknown.length + settled.length).toBeLessThanOrEqual(KILLS * SENDER_CONCURRENCY * GROUP_CONCURRENCY);
  expect(targets.filter((t) => t.status !== 'unknown' && t.status !== 'sent')).toEqual([]);

  // A run without an unknown target is a success; one with them is partial.
  const runsWithUnknown = new Set(unknown.map((t) => t.run_id));
  for (const r of runs) expect(r.status).toBe(runsWithUnknown.has(r.id) ? 'partial' : 'success');

  // Every chat recorded `sent` arrived exactly once.
  const sentRows = targets.filter((t) => t.status === 'sent');
  for (const t of sentRows) expect(byChat.get(t.chat_id)?.length).toBe(1);
  expect(sentRows.length + unknown.length).toBe(ACCOUNTS * CHATS_PER_ACCOUNT);

  // Never too fast, across replicas and the restarts: no account over burst + pace × W at the platform.
  expect(paceBreaches(items, PER_MINUTE, 1)).toEqual([]);
}, 420_000);
