/** One live socket per account (libs/redis `SocketLeases`): a second connection of a linked device drops the first. */
export interface SocketLease {
  /** 'taken', 'handed' (its last holder closed its socket and let go) or 'held' when `holder` has the lease now; 'busy' when another has it, who is asked to hand over. */
  acquire(accountId: string, holder: string, ttlMs: number, askHandover?: boolean): Promise<'taken' | 'handed' | 'held' | 'busy'>;
  /** Keeps the lease: 'handover' when another holder asked for it, 'lost' when it is no longer ours. */
  renew(accountId: string, holder: string, ttlMs: number): Promise<'held' | 'handover' | 'lost'>;
  release(accountId: string, holder: string): Promise<boolean>;
  peek(accountId: string, holder: string): Promise<'mine' | 'other' | 'free'>;
}
