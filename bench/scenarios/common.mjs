import { randomBytes } from 'node:crypto';
import { apiCall, createScratchDatabase, eventually, scrapeSum, startStack, sandboxGet } from '@metronome/testkit';

/** A fresh database and Redis prefix, the whole stack on them, and a tenant. */
export async function withStack(env, options, work) {
  const db = await createScratchDatabase(env.databaseUrl, 'bench');
  const keyPrefix = `bench-${randomBytes(4).toString('hex')}`;
  // The benchmark creates thousands of accounts and campaigns with one token: lift the API's
  // per-token request limit, which protects real deployments from runaway clients.
  const apiEnv = { API_RATE_LIMIT_PER_MINUTE: '1000000', ...options.apiEnv };
  const stack = await startStack({ databaseUrl: db.url, redisUrl: env.redisUrl, keyPrefix, ...options, apiEnv });
  try {
    const tenant = await call(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'bench' });
    return await work({ stack, token: tenant.token, db, keyPrefix });
  } finally {
    await stack.stop().catch((e) => console.error(e.message));
    await db.drop();
  }
}

/**
 * The start-lag scenarios' stack (start-lag, first-start): 2 senders, the sandbox answering in
 * 20 ms, a 1 s scheduler tick, accounts at 600 sends a minute.
 */
export const START_LAG_STACK = {
  senders: 2,
  sandboxEnv: { SANDBOX_LATENCY_MS: '20' },
  schedulerEnv: { SCHEDULER_TICK_MS: '1000' },
  senderEnv: { DEFAULT_MAX_SEND_PER_MINUTE: '600' },
};

export async function call(stack, method, url, token, body) {
  const res = await apiCall(stack.apiUrl, method, url, token, body);
  if (res.status >= 300) throw new Error(`${method} ${url} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Creates accounts in parallel batches, each with its own API key at the sandbox (as a platform
 * issues them: the API tells an account's receipts by its key).
 */
export async function createAccounts(stack, token, n, extra, prefix = 'acc') {
  const out = [];
  for (let i = 0; i < n; i += 20) {
    const batch = Array.from({ length: Math.min(20, n - i) }, (_, k) =>
      call(stack, 'POST', '/v1/accounts', token, {
        platform: 'http',
        credentials: { apiKey: `bench-api-key-${prefix}-${i + k}` },
        name: `${prefix}-${i + k}`,
        externalId: `${prefix}-${i + k}`,
        ...extra,
      }),
    );
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

export const chats = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/**
 * One campaign per account (`name` and chats from `prefix` and its index), created `batch` at a
 * time through the API; `schedule(i)` gives the i-th campaign's schedule.
 */
export async function createCampaigns(stack, token, accounts, { prefix, schedule, chatsPerCampaign, text = 'tick', batch = 25 }) {
  const ids = [];
  for (let i = 0; i < accounts.length; i += batch) {
    const created = await Promise.all(
      accounts.slice(i, i + batch).map((a, k) =>
        call(stack, 'POST', '/v1/campaigns', token, {
          accountId: a.id,
          name: `${prefix}${i + k}`,
          timezone: 'UTC',
          schedule: schedule(i + k),
          messages: [{ type: 'text', text }],
          targets: chats(`${prefix}${i + k}`, chatsPerCampaign),
        }),
      ),
    );
    ids.push(...created.map((c) => c.id));
  }
  return ids;
}

/**
 * One interval campaign per account, their first occurrences spread evenly over one interval
 * from `firstAt` (as campaigns created at different times would be), `chatsPerCampaign` chats each.
 */
export async function createSpreadCampaigns(stack, token, accounts, { everySeconds, chatsPerCampaign, firstAt }) {
  await createCampaigns(stack, token, accounts, {
    prefix: 'c',
    chatsPerCampaign,
    schedule: (i) => ({ type: 'interval', everySeconds, startAt: new Date(firstAt + Math.floor((i * everySeconds * 1000) / accounts.length)).toISOString() }),
  });
}

/** Every run the token can see, all pages. */
export async function listRuns(stack, token) {
  const runs = [];
  let cursor = null;
  do {
    const page = await call(stack, 'GET', `/v1/runs?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
    runs.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return runs;
}

/** Waits until every run of the tenant (`which` of them) is finished; returns them. */
export async function waitForRuns(stack, token, expected, timeoutMs, which = () => true) {
  return eventually(
    `${expected} runs to finish`,
    async () => {
      const runs = (await listRuns(stack, token)).filter(which);
      const done = runs.filter((r) => !['queued', 'running'].includes(r.status));
      if (runs.length >= expected && done.length === runs.length) return runs;
      throw new Error(`${done.length}/${expected} runs finished`); // the timeout's message says how far it got
    },
    timeoutMs,
    500,
  );
}

export const sandbox = (stack, p) => sandboxGet(stack.sandboxUrl, p);

/**
 * Waits until the sandbox has accepted `expected` messages more than `base`, or its count has
 * stood still for `stallMs` (some sends will not come: waitForRuns then says how the runs
 * ended). A benchmark that measures sending waits on this rather than on waitForRuns alone:
 * listing every run with its counts twice a second cost the API and PostgreSQL about 40 ms each
 * per poll at 600 runs, on the cores the senders were being measured on; the sandbox's count
 * costs it a few ms.
 */
export async function waitForAccepted(stack, base, expected, stallMs = 5000) {
  let last = -1;
  let lastChange = Date.now();
  await eventually(
    `${expected} messages at the sandbox`,
    async () => {
      const accepted = (await sandbox(stack, '/sandbox/stats')).accepted - base;
      if (accepted !== last) [last, lastChange] = [accepted, Date.now()];
      return accepted >= expected || Date.now() - lastChange > stallMs;
    },
    600_000,
    100,
  );
}

export function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The most events in any window of `ms`. */
export function mostInWindow(times, ms) {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** The senders' CPU seconds so far, summed from their own metrics (`process_cpu_seconds_total`). */
export function sendersCpu(stack) {
  return Promise.all(stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, 'process_cpu_seconds_total'))).then((v) =>
    v.reduce((a, b) => a + b, 0),
  );
}
