/**
 * Accounts whose socket this replica just handed to another (the holder's move, or another replica's request): neither its
 * jobs nor its holder open it here again for `patienceMs`, so the replica taking it is not raced by this one's running jobs.
 */
export class HandedOn {
  private readonly at = new Map<string, number>();

  constructor(
    private readonly clock: { now(): number },
    readonly patienceMs: number,
  ) {}

  mark(accountId: string): void {
    if (this.at.size > 10_000) this.at.clear();
    this.at.set(accountId, this.clock.now());
  }

  recent(accountId: string, now = this.clock.now()): boolean {
    const at = this.at.get(accountId);
    if (at === undefined) return false;
    if (now - at < this.patienceMs) return true;
    this.at.delete(accountId);
    return false;
  }
}
