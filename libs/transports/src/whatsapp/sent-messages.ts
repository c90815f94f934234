import type { proto } from '@whiskeysockets/baileys';

/**
 * The messages this replica sent lately, by account and message id, for Baileys' `getMessage`:
 * a recipient whose device could not decrypt a message asks the sender to encrypt it again,
 * and without the message itself that chat would show "waiting for this message" forever.
 * Bounded (oldest dropped first): such retries come within minutes of the send. In memory, so
 * a retry that reaches another replica after the socket moved finds nothing (WhatsApp then
 * shows the placeholder, as it does for any sender that no longer has the message).
 */
export class SentMessages {
  private readonly messages = new Map<string, proto.IMessage>();

  constructor(private readonly max = 5_000) {}

  remember(accountId: string, messageId: string, message: proto.IMessage): void {
    const key = `${accountId}:${messageId}`;
    this.messages.delete(key);
    this.messages.set(key, message);
    if (this.messages.size > this.max) this.messages.delete(this.messages.keys().next().value!);
  }

  get(accountId: string, messageId: string): proto.IMessage | undefined {
    return this.messages.get(`${accountId}:${messageId}`);
  }
}
