interface Waiter<K, Q, R> {
  key: K;
  request: Q;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: a request goes out at once when fewer than `maxOut` calls are out (one, unless
 * told); requests made while that many are out wait, then go together in the next call that
 * can go (requests with different keys never share one). Each request may carry what it asks
 * (`Q`; none for requests that differ only in number). `call` answers the first requests of a
 * batch in order; those it leaves unanswered ask again at once, first in line. A failed call
 * fails every request it carried. Written by hand: it is a dozen lines, and the batching
 * libraries (DataLoader and the like) batch by event-loop tick, not by "while a call is out",
 * which is what keeps a lone request from waiting at all.
 */
export class GroupCommit<K, R, Q = undefined> {
  private waiting: Waiter<K, Q, R>[] = [];
  private out = 0;

  constructor(
    private readonly call: (key: K, requests: Q[]) => Promise<R[]>,
    private readonly maxOut = 1,
  ) {}

  ask(key: K, ...request: Q extends undefined ? [] : [Q]): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ key, request: request[0] as Q, resolve, reject });
      if (this.out < this.maxOut) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.out++;
    while (this.waiting.length > 0) {
      const key = this.waiting[0]!.key;
      const batch = this.waiting.filter((w) => w.key === key);
      this.waiting = this.waiting.filter((w) => w.key !== key);
      try {
        const results = await this.call(
          key,
          batch.map((w) => w.request),
        );
        if (results.length === 0) throw new Error('a group commit call answered none of its requests');
        results.slice(0, batch.length).forEach((result, i) => batch[i]!.resolve(result));
        this.waiting.unshift(...batch.slice(results.length));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.out--;
  }
}
