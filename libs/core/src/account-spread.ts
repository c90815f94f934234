/** What one sender sees when it decides which always-connected accounts to hold (issue 53). */
export interface SpreadView {
  /** this sender's id */
  me: string;
  /** the live senders (heartbeats), this one included */
  senders: readonly string[];
  /** the accounts that should be connected somewhere */
  accounts: readonly string[];
  /** each account's holder by its lease, as a sender id; absent: nobody holds it */
  holders: ReadonlyMap<string, string>;
  /** the accounts whose connection this sender has open or opening */
  held: ReadonlySet<string>;
  /** held accounts a send is using now: never let go */
  busy: ReadonlySet<string>;
  /** when this sender began holding each held account: the longest held go first, so none moves twice in a row */
  heldSince?: ReadonlyMap<string, number>;
  /** the most accounts this pass may let go to others (closing, not counting accounts no longer listed) */
  maxMoves: number;
}

export interface SpreadPlan {
  /** free accounts to open, best first */
  take: string[];
  /** held accounts to close, their leases let go for another sender to take */
  letGo: string[];
  /** the sender below its share each account let go, or each free account left to others, is meant for: its jobs go there at once (job-routes.ts) */
  takers: Map<string, string>;
  /** accounts each sender should hold: ceil(accounts / senders) */
  share: number;
}

/** How far past its share a sender may hold before it hands accounts over: slack against churn. */
export const SPREAD_SLACK = 0.1;

/**
 * Which accounts this sender takes and lets go. Each sender holds up to its share; one above it
 * by more than the slack lets the excess go to senders below theirs, and the free accounts are
 * taken by senders below their share. Only free leases are taken: an account moves by its holder
 * closing first, never by two connections at once. Each sender tries free accounts in an order
 * of its own (a hash with its id), so two rarely reach for the same one.
 */
export function planSpread(v: SpreadView): SpreadPlan {
  const senders = new Set(v.senders).add(v.me);
  const listed = new Set(v.accounts);
  const share = Math.ceil(listed.size / senders.size);
  const letGo = [...v.held].filter((a) => !listed.has(a) && !v.busy.has(a));
  const mine = [...v.held].filter((a) => listed.has(a));

  const counts = new Map<string, number>([...senders].map((s) => [s, 0]));
  for (const [account, holder] of v.holders) if (listed.has(account) && counts.has(holder) && holder !== v.me) counts.set(holder, counts.get(holder)! + 1);
  const deficit = [...counts].reduce((sum, [s, n]) => (s === v.me ? sum : sum + Math.max(0, share - n)), 0);
  const surplus = mine.length - share;
  const takers = new Map<string, string>();
  const free = v.accounts.filter((a) => !v.holders.has(a) && !v.held.has(a));
  // each account handed on goes to the sender furthest below its share, in turn
  const short = new Map([...counts].filter(([s, n]) => s !== v.me && n < share));
  const handTo = (account: string) => {
    const [taker] = [...short].sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1))[0]!;
    takers.set(account, taker);
    short.set(taker, short.get(taker)! + 1);
    if (short.get(taker)! >= share) short.delete(taker);
  };
  // a hand-over waits while more accounts are connected nowhere than the senders' passes move: they take the connect pace first
  if (surplus > Math.floor(share * SPREAD_SLACK) && deficit > 0 && free.length <= v.maxMoves * senders.size) {
    const since = (a: string) => v.heldSince?.get(a) ?? 0;
    const rank = byRank(v.me);
    const movable = mine.filter((a) => !v.busy.has(a)).sort((a, b) => since(b) - since(a) || rank(a, b));
    const moving = movable.slice(Math.max(0, movable.length - Math.min(surplus, deficit, v.maxMoves)));
    letGo.push(...moving);
    for (const account of moving) handTo(account);
  }

  // up to the even floor first; past it only while no other sender is below its floor
  const floor = Math.floor(listed.size / senders.size);
  const othersShort = [...counts].some(([s, n]) => s !== v.me && n < floor);
  const room = (othersShort ? floor : share) - mine.length;
  const take = free.sort(byRank(v.me)).slice(0, Math.max(0, room));
  // the free accounts left to senders below their share: this sender's sends waiting to open them give them up (account-holder.ts)
  if (othersShort) for (const account of free.slice(take.length)) if (short.size > 0) handTo(account);
  return { take, letGo, takers, share };
}

/** This sender's order of accounts: its best first (kept longest, taken first). */
function byRank(me: string): (a: string, b: string) => number {
  const rank = new Map<string, number>();
  const of = (account: string) => rank.get(account) ?? rank.set(account, fnv1a(`${me}|${account}`)).get(account)!;
  return (a, b) => of(a) - of(b) || (a < b ? -1 : a > b ? 1 : 0);
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
