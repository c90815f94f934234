/**
 * Thrown by a check to stop `eventually` at once: waiting longer cannot help (the process it
 * waits for has exited, say), so the test should fail now with this message, not at the timeout.
 */
export class GiveUp extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GiveUp';
  }
}

/**
 * Waits until `check` returns a truthy value (polling every `everyMs`) and returns it, or fails
 * with `what` and the last error the check threw. A check that throws is retried (a server that
 * does not answer yet is the usual case), except for `GiveUp`, which ends the wait at once.
 * Tests and benchmarks poll through this one function, so every wait reads and fails alike.
 */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      if (error instanceof GiveUp) throw error;
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
