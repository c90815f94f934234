/** Sleeps used for simulated latency and hangs; `wakeAll` ends them early so shutdown is not held up by a long hang. */
export interface Sleeper {
  sleep(ms: number): Promise<void>;
  wakeAll(): void;
}

export function createSleeper(): Sleeper {
  const pending = new Set<() => void>();
  return {
    sleep(ms) {
      if (ms <= 0) return Promise.resolve();
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          pending.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        pending.add(wake);
      });
    },
    wakeAll() {
      for (const wake of [...pending]) wake();
    },
  };
}
