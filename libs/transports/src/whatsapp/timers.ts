export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A timer as a promise, cancellable, that never keeps the process alive. */
export function delay(ms: number): { promise: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Timers as the pool sets them: real ones in production, a manual clock's in tests. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

export const realTimers: Timers = {
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
