/**
 * A write of the auth state the store did not take. Baileys' key transaction rethrows it from
 * its commit, which comes after the message was written (relayMessage runs `sendNode` inside
 * the transaction): the transport reads it by class, never by message.
 */
export class KeysUnsavedError extends Error {
  constructor(cause: unknown) {
    super("the store did not take the account's keys", { cause });
    this.name = 'KeysUnsavedError';
  }
}
