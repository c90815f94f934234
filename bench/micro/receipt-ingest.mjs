// What a receipt costs the control API and PostgreSQL, with the API alone: ACCOUNTS http
// accounts, one run each of 50 chats recorded `sent` straight in the tables, then every message's
// delivery and half its reads POSTed to /v1/platform/receipts, PER_POST receipts a post (one
// account's), CONCURRENCY posts at a time, as a platform posting each account's receipts as
// they come. CPU from /proc: the API process and the database's backends; this process (the
// platform's side) is not counted. ROUNDS rounds, each on runs of their own.
// PROFILE=dir writes the API's CPU profile there (node --cpu-prof).
//
//   node bench/micro/receipt-ingest.mjs [PER_POST=6] [CONCURRENCY=16] [ACCOUNTS=200] [ROUNDS=2]
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { loadavg } from 'node:os';
import { createDb, insertRuns } from '@metronome/db';
import { sql } from 'kysely';
import { apiCall, createScratchDatabase } from '@metronome/testkit';
import { createAccounts, createCampaigns } from '../scenarios/common.mjs';
import { cpuBetween, cpuSnapshot } from '../scenarios/cpu-split.mjs';

const PER_POST = Number(process.argv[2] ?? 6);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const ACCOUNTS = Number(process.argv[4] ?? 200);
const ROUNDS = Number(process.argv[5] ?? 2);
const CHATS = 50;

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome';
const scratch = await createScratchDatabase(databaseUrl, 'receipt_ingest');
const adminToken = `admin-${randomBytes(16).toString('hex')}`;
const execArgv = process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : [];
const api = spawn(process.execPath, [...execArgv, 'services/control-api/dist/server.js'], {
  env: {
    ...process.env,
    NODE_ENV: 'development',
    DATABASE_URL: scratch.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    KEY_PREFIX: `rcpt-${randomBytes(4).toString('hex')}`,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let lines = 0;
const apiUrl = await new Promise((resolve) => {
  let buffered = '';
  api.stdout.on('data', (chunk) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop();
    for (const line of parts) {
      lines++;
      const parsed = JSON.parse(line);
      if (parsed.msg === 'control-api listening') resolve(parsed.url);
    }
  });
});
const db = createDb({ url: scratch.url, max: 2 });
const stack = { apiUrl, services: [{ name: 'api', child: api }] };
try {
  const tenant = (await apiCall(apiUrl, 'POST', '/v1/tenants', adminToken, { name: 'bench' })).body;
  const accounts = await createAccounts(stack, tenant.token, ACCOUNTS, {}, 'rcpt');
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  for (let round = 1; round <= ROUNDS; round++) {
    const prefix = `r${round}-`;
    const campaigns = await createCampaigns(stack, tenant.token, accounts, {
      prefix,
      chatsPerCampaign: CHATS,
      schedule: () => ({ type: 'once', at: new Date(Date.now() + 86_400_000).toISOString() }),
    });
    const runs = campaigns.map((campaignId, i) => ({
      id: randomUUID(),
      campaignId,
      tenantId: tenant.id,
      accountId: accounts[i].id,
      trigger: 'manual',
      parts: [{ type: 'text', text: 'tick' }],
      scheduledAt: new Date(),
      windowEndAt: null,
      jobId: `bench-${randomUUID()}`,
    }));
    await insertRuns(db, runs);
    await sql`update run_targets set status = 'sent', sent_at = now(), parts_sent = 1, message_ids = array['m-' || run_id || '-' || chat_id]
                where run_id = any(${runs.map((r) => r.id)}::uuid[])`.execute(db);
    await sql`analyze run_targets`.execute(db);
    // each account's receipts as a platform tells them: deliveries first, then half read
    const posts = [];
    for (const status of ['delivered', 'read'])
      accounts.forEach((_, i) => {
        const chats = Array.from({ length: status === 'read' ? CHATS / 2 : CHATS }, (_, k) => `${prefix}${i}-${k}`);
        for (let k = 0; k < chats.length; k += PER_POST)
          posts.push({
            key: `bench-api-key-rcpt-${i}`,
            receipts: chats.slice(k, k + PER_POST).map((chatId) => ({ messageId: `m-${runs[i].id}-${chatId}`, chatId, status, at: new Date().toISOString() })),
          });
      });
    const receipts = posts.reduce((n, p) => n + p.receipts.length, 0);
    const before = await cpuSnapshot(stack, scratch.url, scratch.name);
    const started = performance.now();
    let next = 0;
    let ignored = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < posts.length) {
          const answer = await post(agent, apiUrl, posts[next++]);
          ignored += answer.ignored;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuBetween(before, await cpuSnapshot(stack, scratch.url, scratch.name));
    console.log(
      `round ${round}: ${posts.length} posts of ${PER_POST}, ${receipts} receipts (${ignored} ignored) in ${seconds.toFixed(1)} s: ` +
        `${(posts.length / seconds).toFixed(0)} posts/s; CPU ms/receipt API ${((cpu.api * 1000) / receipts).toFixed(3)}, ` +
        `PostgreSQL ${((cpu.postgres * 1000) / receipts).toFixed(3)}; ms/post API ${((cpu.api * 1000) / posts.length).toFixed(2)}, ` +
        `PostgreSQL ${((cpu.postgres * 1000) / posts.length).toFixed(2)}; load1 ${loadavg()[0].toFixed(2)}`,
    );
  }
  console.log(`API log lines: ${lines}`);
} finally {
  await db.destroy();
  api.kill('SIGTERM');
  await new Promise((resolve) => api.once('exit', resolve));
  await scratch.drop();
}

function post(agent, apiUrl, { key, receipts }) {
  const url = new URL('/v1/platform/receipts', apiUrl);
  const body = JSON.stringify({ receipts });
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`POST receipts → ${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
