// Receipts as a platform tells them (CONTRACT §5, protocol extension), POSTed with the account's key after delays a test
// sets; switches make them late, out of order, twice, or withheld. Every receipt posted is kept for tests to read.
import http from 'node:http';
import { bearerKey } from './api-keys.js';
import { seededRandom } from './random.js';

export interface ReceiptSettings {
  /** where receipts go (Metronome's POST /v1/platform/receipts); null: none are sent */
  url: string | null;
  /** when a message counts as delivered, after it was accepted */
  deliveredAfterMs: number;
  /** when it counts as read, after it was accepted; null: never read */
  readAfterMs: number | null;
  /** the share of messages read (seeded) */
  readShare: number;
  /** how long after its `at` a receipt is posted (a late receipt) */
  lateByMs: number;
  /** each receipt posted twice */
  twice: boolean;
  /** a message's read posted before its delivery, and each batch shuffled */
  outOfOrder: boolean;
  /** accounts whose messages get no receipts (as a silently restricted number); taken off the list, their withheld receipts go, late */
  stoppedAccounts: string[];
  batchSize: number;
  /** how long receipts that fall due gather before they go, ms */
  flushMs: number;
  /** 1: one POST per account, its key the bearer; more: up to this many accounts' receipts in one POST, each group with its key (the form with `accounts`) */
  accountsPerPost: number;
}

export const DEFAULT_RECEIPTS: ReceiptSettings = {
  url: null,
  deliveredAfterMs: 0,
  readAfterMs: null,
  readShare: 1,
  lateByMs: 0,
  twice: false,
  outOfOrder: false,
  stoppedAccounts: [],
  batchSize: 500,
  flushMs: 20,
  accountsPerPost: 1,
};

export interface PostedReceipt {
  account: string;
  messageId: string;
  chatId: string;
  status: 'delivered' | 'read';
  /** ISO time the receipt says */
  at: string;
  /** which POST carried it (numbered from 1 since the last reset): receipts of several accounts share one in the form with `accounts` */
  post: number;
}

interface Accepted {
  account: string;
  messageId: string;
  chatId: string;
  bearer: string | null;
}

interface Outgoing extends Omit<PostedReceipt, 'post'> {
  bearer: string | null;
  tries: number;
  /** in the log of posted receipts already (a retry is not posted twice there) */
  logged?: boolean;
}

/** What a receipts POST was answered: receipts ignored in all, and per group in the form with `accounts`. */
export interface PostAnswer {
  ignored: number;
  /** per group, the places of the receipts it ignored (the form with `accounts`) */
  accounts?: { ignoredIndexes: number[] }[];
}

/** Receipts whose answer said some were not known yet (the send not recorded yet) go again, this many times. */
const RETRIES = 5;
const RETRY_MS = 1_000;

export class SandboxReceipts {
  private settings: ReceiptSettings = { ...DEFAULT_RECEIPTS };
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly posted: PostedReceipt[] = [];
  private readonly scheduled = new Set<string>();
  private random = seededRandom(1);
  private failures = 0;
  private posts = 0;
  /** messages of stopped accounts, whose receipts go when the account is no longer stopped */
  private readonly withheld = new Map<string, { m: Accepted; now: number }[]>();
  private closed = false;

  constructor(private readonly post: (url: string, bearer: string | null, body: unknown) => Promise<PostAnswer | null> = postJson) {}

  config(): ReceiptSettings {
    return { ...this.settings, stoppedAccounts: [...this.settings.stoppedAccounts] };
  }

  update(patch: Partial<ReceiptSettings> & { seed?: number }): ReceiptSettings {
    const { seed, ...rest } = patch;
    if (seed !== undefined) this.random = seededRandom(seed);
    this.settings = { ...this.settings, ...rest };
    for (const [account, held] of [...this.withheld]) {
      if (this.settings.stoppedAccounts.includes(account)) continue;
      this.withheld.delete(account);
      // delivered at last: the receipts tell when, counted from now
      const now = Date.now();
      for (const h of held) this.plan(h.m, now);
    }
    return this.config();
  }

  /** Every receipt posted so far (twice when posted twice), posts that failed, and whether any is still to go (planned, due or being posted). */
  view(): { items: PostedReceipt[]; failedPosts: number; pending: boolean } {
    const pending = this.timers.size > 0 || this.due.length > 0 || this.flushing !== null || this.posting > 0;
    return { items: [...this.posted], failedPosts: this.failures, pending };
  }

  reset(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.posted.length = 0;
    this.scheduled.clear();
    this.withheld.clear();
    this.failures = 0;
    this.posts = 0;
    this.settings = { ...DEFAULT_RECEIPTS };
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** A message was accepted at `now` (ms) and answered: its receipts are planned now. */
  accepted(m: Accepted, now: number): void {
    const s = this.settings;
    if (s.url === null || this.scheduled.has(m.messageId)) return;
    this.scheduled.add(m.messageId);
    if (s.stoppedAccounts.includes(m.account)) {
      this.withheld.set(m.account, [...(this.withheld.get(m.account) ?? []), { m, now }]);
      return;
    }
    this.plan(m, now);
  }

  private plan(m: Accepted, now: number): void {
    const s = this.settings;
    const base = { account: m.account, messageId: m.messageId, chatId: m.chatId, bearer: m.bearer, tries: 0 };
    const delivered: Outgoing = { ...base, status: 'delivered', at: new Date(now + s.deliveredAfterMs).toISOString() };
    const read =
      s.readAfterMs !== null && this.random() < s.readShare
        ? { ...base, status: 'read' as const, at: new Date(now + Math.max(s.readAfterMs, s.deliveredAfterMs)).toISOString() }
        : null;
    // Out of order: the read is posted first, its delivery after it (never before its own time).
    const readIn = read ? Math.max(s.readAfterMs!, s.deliveredAfterMs) + s.lateByMs : 0;
    const deliveredIn = s.outOfOrder && read ? readIn + 50 : s.deliveredAfterMs + s.lateByMs;
    this.later(deliveredIn, [delivered]);
    if (read) this.later(readIn, [read]);
    if (s.twice) {
      this.later(deliveredIn + 100, [{ ...delivered }]);
      if (read) this.later(readIn + 100, [{ ...read }]);
    }
  }

  private later(ms: number, receipts: Outgoing[]): void {
    if (this.closed) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.due.push(...receipts);
      this.flushSoon();
    }, ms);
    this.timers.add(t);
  }

  private readonly due: Outgoing[] = [];
  private flushing: NodeJS.Timeout | null = null;
  private posting = 0;

  /** Receipts due within `flushMs` of each other go together: one POST per account, or several accounts' per POST. */
  private flushSoon(): void {
    if (this.flushing || this.closed) return;
    this.flushing = setTimeout(() => {
      this.flushing = null;
      void this.flush();
    }, this.settings.flushMs);
  }

  private async flush(): Promise<void> {
    const { url, batchSize, accountsPerPost } = this.settings;
    const batch = this.due.splice(0, this.due.length);
    if (url === null || batch.length === 0) return;
    if (this.settings.outOfOrder) batch.sort(() => this.random() - 0.5);
    const byAccount = new Map<string, Outgoing[]>();
    for (const r of batch) {
      const rs = byAccount.get(r.account);
      if (rs) rs.push(r);
      else byAccount.set(r.account, [r]);
    }
    const groups = [...byAccount.values()].flatMap((rs) => chunks(rs, batchSize));
    // a group without a key (a send that carried none) can only go alone, as the bearer form
    const keyed = (rs: Outgoing[]) => accountsPerPost > 1 && bearerKey(rs[0]!.bearer ?? undefined) !== null;
    const alone = groups.filter((rs) => !keyed(rs));
    const together = packed(groups.filter(keyed), accountsPerPost, batchSize);
    await Promise.all([...alone.map((rs) => this.postGroups(url, [rs], false)), ...together.map((post) => this.postGroups(url, post, true))]);
  }

  /** One POST: a group in the bearer form, or groups in the form with `accounts`; groups an answer partly ignored (or a failed post) go again. */
  private async postGroups(url: string, groups: Outgoing[][], withAccounts: boolean): Promise<void> {
    const wire = (rs: Outgoing[]) => rs.map((r) => ({ messageId: r.messageId, chatId: r.chatId, status: r.status, at: r.at }));
    const body = withAccounts
      ? { accounts: groups.map((rs) => ({ key: bearerKey(rs[0]!.bearer ?? undefined), receipts: wire(rs) })) }
      : { receipts: wire(groups[0]!) };
    this.posting++;
    const post = ++this.posts;
    const answer = await this.post(url, withAccounts ? null : groups[0]![0]!.bearer, body).catch(() => null);
    this.posting--; // the retries below are planned before anything else runs
    if (answer === null) this.failures++;
    groups.forEach((rs, g) => {
      if (answer !== null)
        for (const r of rs) {
          if (!r.logged) this.posted.push({ account: r.account, messageId: r.messageId, chatId: r.chatId, status: r.status, at: r.at, post });
          r.logged = true;
        }
      // Some not known yet, or the post failed: they go again (the whole group when the answer does not say which).
      const told = withAccounts ? answer?.accounts?.[g]?.ignoredIndexes : undefined;
      const retry = told ? told.map((i) => rs[i]!).filter(Boolean) : answer === null || answer.ignored > 0 ? rs : [];
      const again = retry.filter((r) => r.tries < RETRIES).map((r) => ({ ...r, tries: r.tries + 1 }));
      if (again.length > 0) this.later(RETRY_MS, again);
    });
  }
}

/** Groups packed into posts of at most `groupsPerPost` groups and `receiptsPerPost` receipts (a larger group goes alone). */
function packed(groups: Outgoing[][], groupsPerPost: number, receiptsPerPost: number): Outgoing[][][] {
  const posts: Outgoing[][][] = [];
  let post: Outgoing[][] = [];
  let n = 0;
  for (const rs of groups) {
    if (post.length > 0 && (post.length >= groupsPerPost || n + rs.length > receiptsPerPost)) {
      posts.push(post);
      post = [];
      n = 0;
    }
    post.push(rs);
    n += rs.length;
  }
  if (post.length > 0) posts.push(post);
  return posts;
}

function chunks<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** Kept-alive connections to the receipts URL (node:http costs the sandbox less CPU per post than fetch). */
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

function postJson(url: string, bearer: string | null, body: unknown): Promise<PostAnswer | null> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        timeout: 10_000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...(bearer && { authorization: bearer }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) return resolve(null);
          try {
            const json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { ignored?: unknown; accounts?: { ignoredIndexes?: unknown }[] };
            const indexes = (x: { ignoredIndexes?: unknown }) => (Array.isArray(x.ignoredIndexes) ? x.ignoredIndexes.filter((i) => Number.isInteger(i)) : []);
            resolve({
              ignored: typeof json.ignored === 'number' ? json.ignored : 0,
              ...(Array.isArray(json.accounts) && { accounts: json.accounts.map((a) => ({ ignoredIndexes: indexes(a) })) }),
            });
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('receipts post timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}
