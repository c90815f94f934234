/** Rethrown by Baileys' key commit after the message was written; read by class, never by message. */
export class KeysUnsavedError extends Error {
  constructor(cause: unknown) {
    super("the store did not take the account's keys", { cause });
    this.name = 'KeysUnsavedError';
  }
}
