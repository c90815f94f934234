import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startService, type ServiceProcess } from '@metronome/testkit';
import { paceBreaches, received, repeats, senderEnvFor, startFanOut } from '../helpers/platform-record.js';
import { runsToEnd, sandbox, startStack, type SandboxMessage, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// A sender whose event loop stalls longer than SENDER_HOLD_MS (a GC pause, a starved CPU) loses
// what it holds while it still believes it holds it: its account lock and BullMQ job lock expire,
// the reconciler ends its targets' leases, and the other sender takes the account and the run's
// job. Then it wakes up. Here it is frozen with SIGSTOP for three holds mid-run, a request of it
// unanswered at the platform, and woken with SIGCONT while the other sends. The platform receives
// every part once: a chat whose send it had begun is `unknown` once its lease ends, never sent
// again; one it held between parts goes back to pending and the other sends the rest; woken, it
// writes nothing: its lock's lease (SENDER_HOLD_MS from its last renewal) has run out, so it
// neither claims nor sends before its stop. Each sender reaches the sandbox through a proxy of its
// own that notes what it wrote, so the record says which sender sent what, and when.

const HOLD_MS = 3_000; // SENDER_HOLD_MS's minimum: locks of 3 s, BullMQ's of 2 s checked every 1 s
const FREEZE_MS = 3 * HOLD_MS;
const CHATS = 60;
// two parts: a chat waits between them, held with no send begun, the case the target lease fences
const PARTS = 2;
const PER_MINUTE = 360; // 120 sends: about 20 s
const LANES = 3;
const ACCOUNT = 'stall-0'; // startFanOut's first account of `stall`
// the chat whose request the platform holds when the sender freezes, about 5 s into the run
const IN_FLIGHT = 'chat-0-15';
const HANG_MS = 1_800;
const senderEnv = { SENDER_HOLD_MS: String(HOLD_MS), SEND_TIMEOUT_MS: '2000', SENDS_PER_JOB: '1000', SENDER_CONCURRENCY: '8' };

/** One message a sender wrote, as the proxy in front of it saw it. */
interface Written {
  sender: number;
  account: string;
  chatId: string;
  partIndex: number;
  at: number;
}

interface Proxy {
  url: string;
  close(): Promise<void>;
}

/** A pass-through proxy between one sender and the sandbox that notes each message the sender writes. */
async function recordingProxy(sandboxUrl: string, sender: number, into: Written[]): Promise<Proxy> {
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const message = /^\/v1\/accounts\/([^/]+)\/messages$/.exec(req.url ?? '');
      if (message) {
        const { chatId, partIndex } = JSON.parse(body.toString('utf8')) as { chatId: string; partIndex: number };
        into.push({ sender, account: decodeURIComponent(message[1]!), chatId, partIndex, at: Date.now() });
      }
      const onward = http.request(new URL(req.url ?? '/', sandboxUrl), { method: req.method, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      onward.on('error', () => res.destroy());
      onward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}

let stack: Stack;
const written: Written[] = [];
const proxies: Proxy[] = [];
const senders: ServiceProcess[] = [];
const metricsPorts: number[] = [];
let frozen: number | undefined;
beforeAll(async () => {
  stack = await startStack({ senders: 0, sandboxEnv: { SANDBOX_LATENCY_MS: '30' } });
  for (let i = 0; i < 2; i++) {
    const proxy = await recordingProxy(stack.sandboxUrl, i, written);
    proxies.push(proxy);
    senders.push(startService(`sender-${i + 1}`, 'services/sender/dist/main.js', senderEnvFor(stack, { ...senderEnv, HTTP_TRANSPORT_URL: proxy.url })));
  }
  for (const s of senders) metricsPorts.push(Number((await s.waitForLog((l) => l['msg'] === 'sender ready'))['metricsPort']));
}, 60_000);
afterAll(async () => {
  // a frozen process would never answer its SIGTERM
  if (frozen !== undefined) process.kill(frozen, 'SIGCONT');
  await Promise.all(senders.map((s) => s.stop()));
  await Promise.all(proxies.map((p) => p.close()));
  await stack?.stop();
}, 60_000);

test('a sender frozen for three holds mid-run loses its account to the other and, woken, sends nothing twice', async () => {
  // Frozen with a request at the platform unanswered: the platform holds this chat's first answer
  // (less than the send timeout), and the sender that wrote it is stopped as soon as it arrives.
  const hang = await fetch(`${stack.sandboxUrl}/sandbox/chats/${ACCOUNT}/${IN_FLIGHT}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ hangNextMs: HANG_MS }),
  });
  expect(hang.status).toBe(200);
  const { token, runIds } = await startFanOut(stack, {
    name: 'stall',
    accounts: 1,
    chats: CHATS,
    perMinute: PER_MINUTE,
    groupConcurrency: LANES,
    parts: PARTS,
  });
  const runId = runIds[0]!;
  const mine = () => written.filter((w) => w.account === ACCOUNT);
  const { sender: stalled } = await eventually('the held request to be written', async () => mine().find((w) => w.chatId === IN_FLIGHT), 60_000, 10);
  const other = 1 - stalled;
  const pid = senders[stalled]!.child.pid!;
  const stoppedAt = Date.now();
  process.kill(pid, 'SIGSTOP');
  frozen = pid;

  // What it held at the freeze: the targets in flight under its job's lease, the one the held
  // request's target names (in flight until its lease runs out: its sender is stopped).
  const held = new Set<string>();
  let owner: string | null = null;
  await eventually(
    'the other sender to take over and the frozen one to lose its holds',
    async () => {
      const rows = await stack.db.db
        .selectFrom('run_targets')
        .select(['chat_id', 'lease_owner'])
        .where('run_id', '=', runId)
        .where('status', '=', 'in_flight')
        .execute();
      owner ??= rows.find((r) => r.chat_id === IN_FLIGHT)?.lease_owner ?? null;
      for (const r of rows) if (owner !== null && r.lease_owner === owner) held.add(r.chat_id);
      const stillHeld = owner === null || rows.some((r) => r.lease_owner === owner);
      const takenOver = mine().some((w) => w.sender === other && w.at > stoppedAt);
      return Date.now() >= stoppedAt + FREEZE_MS && takenOver && !stillHeld;
    },
    60_000,
    100,
  );
  const wokenAt = Date.now();
  process.kill(pid, 'SIGCONT');
  frozen = undefined;

  const [run] = await runsToEnd(stack, token, runIds, 120_000, 500);
  // every message the sandbox has was noted by a proxy before it went on
  const items = await received(stack, ACCOUNT);

  // The user's view: no part twice, by (account, chat, part) or by idempotency key.
  expect(repeats(items)).toEqual([]);
  const { items: repeatedKeys } = await sandbox<{ items: { account: string }[] }>(stack, '/sandbox/duplicates');
  expect(repeatedKeys.filter((d) => d.account === ACCOUNT)).toEqual([]);

  // The takeover came while the stalled sender was stopped: the other wrote, it did not.
  const during = (sender: number) => mine().filter((w) => w.sender === sender && w.at > stoppedAt + 1_000 && w.at < wokenAt);
  expect(during(other).length).toBeGreaterThan(0);
  expect(during(stalled)).toEqual([]);
  // Woken, it began nothing: a lane waiting out a slot reserved before the freeze, or holding a
  // chat stamped as begun, finds its lock's lease run out and gives the chat back unsent. Only a
  // request a lane had let go just before the freeze may still reach the platform after it (the
  // freeze fell between the lease's check and the bytes on the wire): a chat it held, one a lane.
  const key = (w: Pick<Written, 'chatId' | 'partIndex'>) => `${w.chatId}|${w.partIndex}`;
  const afterWake = mine().filter((w) => w.sender === stalled && w.at >= wokenAt);
  expect(afterWake.filter((w) => !held.has(w.chatId)).map(key)).toEqual([]);
  expect(afterWake.length).toBeLessThanOrEqual(LANES);

  // Nothing lost: every chat sent, whole and once, or `unknown` where a send of it may have been
  // begun when the sender froze (held then, at most one chat per lane), or timed out at the platform.
  const targets = await stack.db.db.selectFrom('run_targets').select(['chat_id', 'status', 'error_code']).where('run_id', '=', runId).execute();
  const byChat = new Map<string, SandboxMessage[]>();
  for (const m of items) byChat.set(m.chatId, [...(byChat.get(m.chatId) ?? []), m]);
  expect(targets).toHaveLength(CHATS);
  expect(targets.filter((t) => t.status !== 'sent' && t.status !== 'unknown')).toEqual([]);
  for (const t of targets.filter((t) => t.status === 'sent'))
    expect({ chat: t.chat_id, parts: byChat.get(t.chat_id)?.length }).toEqual({ chat: t.chat_id, parts: PARTS });
  const unknown = targets.filter((t) => t.status === 'unknown');
  expect(held.size).toBeLessThanOrEqual(LANES);
  // the chat whose request the platform held at the freeze: its first part arrived once, and it is unknown, never sent again
  expect(held.has(IN_FLIGHT)).toBe(true);
  expect(targets.find((t) => t.chat_id === IN_FLIGHT)).toEqual({ chat_id: IN_FLIGHT, status: 'unknown', error_code: 'lease_expired' });
  expect(byChat.get(IN_FLIGHT)?.map((m) => m.partIndex)).toEqual([0]);
  expect(unknown.filter((t) => !held.has(t.chat_id) && !(t.error_code === 'timeout' && byChat.has(t.chat_id)))).toEqual([]);
  expect(run!.status).toBe(unknown.length > 0 ? 'partial' : 'success');
  console.log(
    `frozen ${wokenAt - stoppedAt} ms; held at the freeze: ${[...held].join(', ') || 'none'}; unknown: ${unknown.map((t) => `${t.chat_id} (${t.error_code})`).join(', ') || 'none'}; ` +
      `written by the woken sender after waking: ${afterWake.map(key).join(', ') || 'none'}; pace breaches: ${JSON.stringify(paceBreaches(items, PER_MINUTE, 1))}`,
  );

  // Still healthy: ready, and with the other stopped it sends a later run alone.
  expect((await fetch(`http://127.0.0.1:${metricsPorts[stalled]}/readyz`)).status).toBe(200);
  expect(await senders[other]!.stop()).toBe(0);
  const later = await startFanOut(stack, { name: 'stall-later', accounts: 1, chats: 5, perMinute: 6_000, groupConcurrency: LANES });
  expect((await runsToEnd(stack, later.token, later.runIds, 60_000, 200)).map((r) => r.status)).toEqual(['success']);
  expect(written.filter((w) => w.account === 'stall-later-0').map((w) => w.sender)).toEqual(Array.from({ length: 5 }, () => stalled));
}, 180_000);
