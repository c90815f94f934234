import type { WhatsAppLogger } from './socket.js';

// When a message reaches the socket's write. Baileys' relayMessage logs `{ msgId }` at debug
// level right before its `sendNode(stanza)` (Socket/messages-send.js; write-marks.test.ts holds
// the installed Baileys to it): everything before — group metadata, device lists, sessions —
// sent nothing. The pool hands Baileys a logger that tells this mark to the waiting send.

/** The sends of this replica waiting for their write, by account and message id. */
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

  /** The socket of `accountId` is writing `messageId` now. */
  mark(accountId: string, messageId: string): void {
    const key = `${accountId}\u0000${messageId}`;
    const resolve = this.waiting.get(key);
    if (!resolve) return;
    this.waiting.delete(key);
    resolve();
  }

  /** The logger Baileys gets for the account: `logger`, with its write marks read on the way. */
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

/** The message id of Baileys' pre-write debug line (an object with `msgId` alone), else null. */
export function writeMarkOf(obj: unknown): string | null {
  if (!obj || typeof obj !== 'object') return null;
  const keys = Object.keys(obj);
  const msgId = (obj as { msgId?: unknown }).msgId;
  return keys.length === 1 && typeof msgId === 'string' ? msgId : null;
}
