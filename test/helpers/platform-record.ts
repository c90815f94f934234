import { api, sandbox, type SandboxMessage, type Stack } from './stack.js';
import { REDIS_URL } from './test-env.js';

// The sandbox's record is the judge of sending promises: what the platform received, and when.

/** Everything the sandbox received, or one platform account's part of it, in arrival order. */
export async function received(stack: Pick<Stack, 'sandboxUrl'>, account?: string): Promise<SandboxMessage[]> {
  const { items } = await sandbox<{ items: SandboxMessage[] }>(
    stack,
    account ? `/sandbox/messages?account=${encodeURIComponent(account)}` : '/sandbox/messages',
  );
  return items;
}

/** Each (account, chat, part) the platform received more than once. */
export function repeats(items: SandboxMessage[]): string[] {
  const seen = new Map<string, number>();
  for (const m of items) {
    const key = `${m.account}|${m.chatId}|${m.partIndex}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].filter(([, n]) => n > 1).map(([key]) => key);
}

/** The most requests one account's record holds in any window of `windowMs` (both ends included), and when that window starts. */
export function busiestWindow(times: number[], windowMs: number): { most: number; from: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let from = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! > windowMs) start++;
    if (end - start + 1 > most) {
      most = end - start + 1;
      from = sorted[start]!;
    }
  }
  return { most, from };
}

/** A window in which an account received more than the pace allows. */
export interface PaceBreach {
  account: string;
  windowMs: number;
  most: number;
  limit: number;
  /** the window's first stamp */
  from: number;
  /** the largest stamp slack in it (the sandbox's event loop held up; 0 when it kept up) */
  slackMs: number;
  /** the time between each two stamps in it, ms, in order: where the sends came closer than the pace (read when a run fails) */
  gapsMs: number[];
}

/**
 * The windows in which an account received more than `burst + pace × W` (CONTRACT: never too
 * fast, judged at the platform), for W = 1 s and 10 s: for each account, its worst window.
 *
 * A stamp is the moment the sandbox's event loop reached the request; when the loop was held up
 * (a garbage collection, every core of the machine taken), requests that came apart are stamped
 * together, up to `stampSlackMs` later than they came (services/sandbox/src/loop-watch.ts). The
 * requests stamped in a window of W then came within W plus the largest slack among them, and
 * are judged against the pace over that span. A loop that kept up has no slack: W alone.
 * The slack covers the requests read just after a hold too: a sender whose connections all wait
 * for answers the hold holds back writes its next requests on new ones, read a pass after the
 * hold; stamped as just come, they were once a false breach (test/integration/sandbox-stamp-slack).
 */
export function paceBreaches(items: SandboxMessage[], perMinute: number, burst: number): PaceBreach[] {
  const byAccount = new Map<string, SandboxMessage[]>();
  for (const m of items) byAccount.set(m.account, [...(byAccount.get(m.account) ?? []), m]);
  const breaches: PaceBreach[] = [];
  for (const [account, received] of byAccount) {
    const sorted = [...received].sort((a, b) => a.receivedAt - b.receivedAt);
    for (const windowMs of [1_000, 10_000]) {
      let worst: PaceBreach | null = null;
      let start = 0;
      for (let end = 0; end < sorted.length; end++) {
        while (sorted[end]!.receivedAt - sorted[start]!.receivedAt > windowMs) start++;
        const inWindow = sorted.slice(start, end + 1);
        const slackMs = Math.max(...inWindow.map((m) => m.stampSlackMs));
        const limit = Math.floor(burst + (perMinute / 60_000) * (windowMs + slackMs));
        const most = inWindow.length;
        if (most > limit && (worst === null || most - limit > worst.most - worst.limit)) {
          const gapsMs = inWindow.slice(1).map((m, i) => m.receivedAt - inWindow[i]!.receivedAt);
          worst = { account, windowMs, most, limit, from: sorted[start]!.receivedAt, slackMs, gapsMs };
        }
      }
      if (worst) breaches.push(worst);
    }
  }
  return breaches;
}

/**
 * A fan-out for the fault tests: one tenant, `accounts` http accounts at `perMinute`, each with
 * one text campaign of `parts` parts (1 unless told) to `chats` chats (`chat-<account>-<n>`,
 * unique across accounts) started at once with "run now". Returns the tenant's token and the runs' ids.
 */
export async function startFanOut(
  stack: Stack,
  o: {
    name: string;
    accounts: number;
    chats: number;
    perMinute: number;
    groupConcurrency: number;
    parts?: number;
    platformDeduplicates?: (account: number) => boolean;
  },
): Promise<{ token: string; runIds: string[] }> {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: o.name });
  if (tenant.status !== 201) throw new Error(`tenant: ${tenant.status}`);
  const token: string = tenant.body.token;
  const runIds: string[] = [];
  for (let a = 0; a < o.accounts; a++) {
    const acc = await api(stack, 'POST', '/v1/accounts', token, {
      platform: 'http',
      credentials: { apiKey: 'sandbox-api-key-0001' },
      name: `a${a}`,
      externalId: `${o.name}-${a}`,
      maxSendPerMinute: o.perMinute,
      groupConcurrency: o.groupConcurrency,
      ...(o.platformDeduplicates?.(a) && { platformDeduplicates: true }),
    });
    if (acc.status !== 201) throw new Error(`account: ${acc.status} ${JSON.stringify(acc.body)}`);
    const c = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: acc.body.id,
      name: `c${a}`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: o.parts === undefined ? [{ type: 'text', text: 'hi' }] : Array.from({ length: o.parts }, (_, p) => ({ type: 'text', text: `hi ${p + 1}` })),
      targets: Array.from({ length: o.chats }, (_, i) => `chat-${a}-${i}`),
      active: false,
    });
    if (c.status !== 201) throw new Error(`campaign: ${c.status} ${JSON.stringify(c.body)}`);
    const run = await api(stack, 'POST', `/v1/campaigns/${c.body.id}/runs`, token);
    if (run.status !== 201) throw new Error(`run now: ${run.status}`);
    runIds.push(run.body.id);
  }
  return { token, runIds };
}

/** The environment a sender process of `stack` needs (what startStack gives its own). */
export function senderEnvFor(stack: Stack, extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: stack.db.url, REDIS_URL: REDIS_URL, KEY_PREFIX: stack.keyPrefix, METRICS_PORT: '0', HTTP_TRANSPORT_URL: stack.sandboxUrl, ...extra };
}
