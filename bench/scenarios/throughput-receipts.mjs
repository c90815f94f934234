import { loadavg } from 'node:os';
import { scrapeSum } from '@metronome/testkit';
import { createAccounts, listRuns, sandbox, sendersCpu, withStack } from './common.mjs';
import { cpuBetween, cpuSnapshot } from './cpu-split.mjs';
import { phase } from './throughput.mjs';

// The throughput scenario with the sandbox's receipts off and on, in turns (off, on, off, on) on
// one stack after a warm-up turn whose figures are discarded (the first turn of a stack is its
// slowest: V8 still compiles the send and receipt paths): receipts are off the send path
// (CONTRACT §5), so sending beside them should keep within 10 % of sending without them. With
// receipts on, every message is delivered as soon as it is accepted and half are read a second
// later, posted to the API (POST /v1/platform/receipts) while the senders send: `on` as a
// platform's webhook posts them, many accounts' receipts a POST (the form with `accounts`),
// `per-account` one POST per account with its key as the bearer. A turn with receipts ends when
// the API shows every delivery and the sandbox has nothing more to post, so no turn carries
// another's receipts. Each turn records its CPU per process and for the stack's PostgreSQL
// backends (cpu-split.mjs); a receipt's cost per part is a turn with receipts less one without,
// over the receipts the API took in (the sandbox's share is the platform's, off our machines in
// a deployment).
const ACCOUNTS = 200;
const FLUSH_MS = 20;
const BATCHED_FLUSH_MS = 250;
/** accounts per POST in an `on` turn (at most batchSize, 500, receipts a post) */
const ACCOUNTS_PER_POST = 1000;
const PER_ACCOUNT = 50;
const RECEIPTS_ON = ['on', 'per-account', 'batched'];

export async function throughputReceipts(env) {
  const accounts = env.quick ? 40 : ACCOUNTS;
  // BENCH_RECEIPTS_ORDER, e.g. on,off,on,off; `batched` is a per-account turn whose platform
  // gathers each account's receipts for 250 ms a post (the sandbox's flushMs) rather than 20
  const order = (process.env.BENCH_RECEIPTS_ORDER ?? 'off,on,off,on').split(',');
  const unknown = order.filter((k) => k !== 'off' && !RECEIPTS_ON.includes(k));
  if (unknown.length > 0) throw new Error(`BENCH_RECEIPTS_ORDER: unknown turns ${unknown.join(', ')} (off, ${RECEIPTS_ON.join(', ')})`);
  return withStack(env, { senders: 2, senderEnv: { SENDER_CONCURRENCY: '32' } }, async ({ stack, token, db }) => {
    const all = await createAccounts(stack, token, (order.length + 1) * accounts, { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    const cpu = () => sendersCpu(stack);
    const turn = async (receipts, slice, prefix) => {
      await setReceipts(stack, receipts);
      const load1 = loadavg()[0];
      const before = { cpu: await cpuSnapshot(stack, db.url, db.name), ingest: await ingestCounts(stack) };
      const r = await phase(stack, token, slice, prefix, cpu);
      const sent = await cpuSnapshot(stack, db.url, db.name);
      const drained = receipts !== 'off' ? await receiptsRecorded(stack, token, r.runs, slice.length * PER_ACCOUNT) : null;
      const after = { cpu: await cpuSnapshot(stack, db.url, db.name), ingest: await ingestCounts(stack) };
      return {
        receipts,
        sendsPerSecond: r.sendsPerSecond,
        cpuMsPerSend: r.cpuMsPerSend,
        sends: r.sends,
        load1: +load1.toFixed(2),
        ...drained,
        // CPU seconds per part while sending, and over the whole turn (with receipts: until all are in)
        cpuWhileSending: cpuBetween(before.cpu, sent),
        cpuTurn: cpuBetween(before.cpu, after.cpu),
        receiptPosts: after.ingest.posts - before.ingest.posts,
        receiptsIngested: after.ingest.receipts - before.ingest.receipts,
        receiptsUnknown: after.ingest.unknown - before.ingest.unknown,
      };
    };
    // the warm-up: a whole turn with receipts, not counted
    const warmup = await turn('on', all.slice(0, accounts), 'w');
    const turns = [];
    for (const [i, receipts] of order.entries()) turns.push(await turn(receipts, all.slice((i + 1) * accounts, (i + 2) * accounts), `t${i}-`));
    await setReceipts(stack, 'off');
    const mean = (which, key) => {
      const xs = turns.filter((t) => t.receipts === which).map((t) => (typeof key === 'function' ? key(t) : t[key]));
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    const stats = await sandbox(stack, '/sandbox/stats');
    // The receipts' CPU: a turn with them less one without, per receipt the API took in.
    const receiptMs = (kind, part) =>
      ((mean(kind, (t) => t.cpuTurn[part]) - mean('off', (t) => t.cpuTurn[part])) * 1000) / mean(kind, (t) => t.receiptsIngested);
    const figures = (kind, label) => ({
      [`sends/s, ${label}`]: mean(kind, 'sendsPerSecond'),
      [`${label} / off`]: mean(kind, 'sendsPerSecond') / mean('off', 'sendsPerSecond'),
      [`sender CPU ms/send, ${label}`]: mean(kind, 'cpuMsPerSend'),
      [`receipts per POST, ${label}`]: mean(kind, 'receiptsIngested') / mean(kind, 'receiptPosts'),
      [`API CPU ms/receipt, ${label}`]: receiptMs(kind, 'api'),
      [`PostgreSQL CPU ms/receipt, ${label}`]: receiptMs(kind, 'postgres'),
      [`sandbox CPU ms/receipt, ${label}`]: receiptMs(kind, 'sandbox'),
    });
    return {
      params: {
        accounts,
        chatsPerAccount: PER_ACCOUNT,
        senders: 2,
        senderConcurrency: 32,
        order,
        warmupTurn: 'on',
        readShare: 0.5,
        readAfterMs: 1000,
        flushMs: FLUSH_MS,
        accountsPerPost: ACCOUNTS_PER_POST,
      },
      figures: {
        'sends/s, receipts off': mean('off', 'sendsPerSecond'),
        'sender CPU ms/send, off': mean('off', 'cpuMsPerSend'),
        ...(order.includes('on') && figures('on', 'on')),
        ...(order.includes('per-account') && figures('per-account', 'per account')),
        ...(order.includes('batched') && figures('batched', 'per account 250 ms')),
        'duplicate deliveries': stats.duplicateKeys,
      },
      warmup,
      turns,
    };
  });
}

/** Receipt POSTs the API answered and the receipts in them (an ignored one, tried again later, counts each time). */
async function ingestCounts(stack) {
  const url = `${stack.apiUrl}/metrics`;
  const [posts, receipts, unknown] = await Promise.all([
    scrapeSum(url, 'metronome_http_request_duration_seconds_count', 'route="/v1/platform/receipts"'),
    scrapeSum(url, 'metronome_receipts_total', 'platform="http"'),
    scrapeSum(url, 'metronome_receipts_total', 'status="unknown"'),
  ]);
  return { posts, receipts, unknown };
}

/** The sandbox's receipts for a turn: none, or delivered at once and half read a second later, posted in the turn's form. */
async function setReceipts(stack, kind) {
  const forms = {
    on: { flushMs: FLUSH_MS, accountsPerPost: ACCOUNTS_PER_POST },
    'per-account': { flushMs: FLUSH_MS, accountsPerPost: 1 },
    batched: { flushMs: BATCHED_FLUSH_MS, accountsPerPost: 1 },
  };
  const body =
    kind === 'off'
      ? { url: null, flushMs: FLUSH_MS, accountsPerPost: 1 }
      : { url: `${stack.apiUrl}/v1/platform/receipts`, deliveredAfterMs: 0, readAfterMs: 1000, readShare: 0.5, seed: 1, ...forms[kind] };
  const res = await fetch(`${stack.sandboxUrl}/sandbox/receipts`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`PUT /sandbox/receipts → ${res.status}`);
}

/** Waits until the runs show every send delivered and the sandbox has stopped posting; how many receipts went. */
async function receiptsRecorded(stack, token, runs, sends) {
  let last = -1;
  let seen = '';
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (Date.now() > deadline) {
      const errors = stack.services
        .find((s) => s.name === 'api')
        .output.filter((l) => /"level":(40|50|60)/.test(l))
        .slice(-5);
      throw new Error(`receipts not all recorded within 180 s of the turn's end (${sends} sends; ${seen}); the API's last warnings:\n${errors.join('\n')}`);
    }
    // the run list in pages of 500 (one request each, under the API's per-token burst limit)
    const ids = new Set(runs.map((r) => r.id));
    const counts = (await listRuns(stack, token)).filter((r) => ids.has(r.id)).map((r) => r.counts);
    const delivered = counts.reduce((a, c) => a + c.delivered, 0);
    const view = await sandbox(stack, '/sandbox/receipts');
    const posted = view.items.length;
    seen = `${delivered} delivered, ${posted} receipts posted, ${view.failedPosts} posts failed, pending ${view.pending}`;
    if (delivered >= sends && posted === last) return { delivered, read: counts.reduce((a, c) => a + c.read, 0), receiptsPostedSoFar: posted };
    last = posted;
    await new Promise((r) => setTimeout(r, 1500));
  }
}
