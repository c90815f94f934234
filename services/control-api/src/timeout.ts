/**
 * `promise`, or a rejection after `ms`. Redis commands wait for a reconnect rather than fail
 * (the connection is shared with BullMQ, which needs that), so a request that must answer
 * promptly bounds its wait with this.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
