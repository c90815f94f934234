/**
 * The cluster-wide lease on an account's one live socket (Redis in production:
 * `SocketLeases` of @metronome/redis satisfies this). WhatsApp lets a linked device keep one
 * connection: a second one makes the server drop the first (`connectionReplaced`), so only the
 * lease holder may open a socket, and it closes its socket before it lets go.
 */
export interface SocketLease {
  /** 'taken' or 'held' when `holder` has the lease now; 'busy' when another has it, who is asked to hand over. */
  acquire(accountId: string, holder: string, ttlMs: number): Promise<'taken' | 'held' | 'busy'>;
  /** Keeps the lease: 'handover' when another holder asked for it, 'lost' when it is no longer ours. */
  renew(accountId: string, holder: string, ttlMs: number): Promise<'held' | 'handover' | 'lost'>;
  release(accountId: string, holder: string): Promise<boolean>;
  /** Who holds the lease, as seen by `holder`, without asking for a hand-over. */
  peek(accountId: string, holder: string): Promise<'mine' | 'other' | 'free'>;
}
