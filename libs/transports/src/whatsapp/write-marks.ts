import type { WhatsAppLogger } from './socket.js';

// A message reaches the socket's write when Baileys' relayMessage logs `{ msgId }` at debug right before `sendNode`
// (write-marks.test.ts holds the installed Baileys to it); everything before sent nothing.

export class WriteMarks {
  private readonly waiting = new Map<string, () => void>();

  /** Settles `written` when `messageId` of the account is written (`isWritten` from then on); `cancel` forgets it. */
  expect(accountId: string, messageId: string): { written: Promise<void>; isWritten(): boolean; cancel(): void } {
    const key = `${accountId}\u0000${messageId}`;
    let done = false;
    const written = new Promise<void>((resolve) =>
      this.waiting.set(key, () => {
        done = true;
        resolve();
      }),
    );
    return { written, isWritten: () => done, cancel: () => this.waiting.delete(key) };
  }

  mark(accountId: string, messageId: string): void {
    const key = `${accountId}\u0000${messageId}`;
    const resolve = this.waiting.get(key);
    if (!resolve) return;
    this.waiting.delete(key);
    resolve();
  }

  logger(accountId: string, logger: WhatsAppLogger): WhatsAppLogger {
    const marks = this;
    return new Proxy(logger, {
      get(target, prop, receiver) {
        if (prop !== 'debug') return Reflect.get(target, prop, receiver);
        return (obj: unknown, msg?: string) => {
          const msgId = writeMarkOf(obj);
          if (msgId !== null) marks.mark(accountId, msgId);
          target.debug(obj, msg);
        };
      },
    });
  }
}

export function writeMarkOf(obj: unknown): string | null {
  if (!obj || typeof obj !== 'object') return null;
  const keys = Object.keys(obj);
  const msgId = (obj as { msgId?: unknown }).msgId;
  return keys.length === 1 && typeof msgId === 'string' ? msgId : null;
}
