interface Waiter<K, Q, R> {
  key: K;
  request: Q;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: a request goes out at once while fewer than `maxOut` calls are out; others wait and go together in the next call (one key per call).
 * `call` answers a batch's first requests in order, the rest ask again first in line. Batching by event-loop tick would make a lone request wait.
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
