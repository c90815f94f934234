import type { ChatDirectorySink, DirectoryChat, DirectoryScope, DirectorySyncState } from '@metronome/core';

export type SinkCall =
  | { method: 'replaceAll'; accountId: string; chats: DirectoryChat[]; scope: DirectoryScope | undefined }
  | { method: 'upsert'; accountId: string; chats: DirectoryChat[] }
  | { method: 'patch'; accountId: string; chatId: string; change: Partial<Omit<DirectoryChat, 'chatId'>> }
  | { method: 'syncState'; accountId: string; state: DirectorySyncState };

/**
 * A RECORDING sink for transport tests, not the chat directory: it stores nothing but the calls
 * a transport made, in order. `entry` folds them the way the contract describes (a listing
 * replaces the entries of its kinds, an upsert replaces entries, a patch changes fields) so a
 * test can ask what one chat's entry would say.
 */
export class RecordingDirectorySink implements ChatDirectorySink {
  readonly calls: SinkCall[] = [];

  async replaceAll(accountId: string, chats: DirectoryChat[], _at: Date, scope?: DirectoryScope): Promise<void> {
    this.calls.push({ method: 'replaceAll', accountId, chats, scope });
  }

  async upsert(accountId: string, chats: DirectoryChat[]): Promise<void> {
    this.calls.push({ method: 'upsert', accountId, chats });
  }

  async patch(accountId: string, chatId: string, change: Partial<Omit<DirectoryChat, 'chatId'>>): Promise<void> {
    this.calls.push({ method: 'patch', accountId, chatId, change });
  }

  async syncState(accountId: string, state: DirectorySyncState): Promise<void> {
    this.calls.push({ method: 'syncState', accountId, state });
  }

  of<M extends SinkCall['method']>(method: M): Extract<SinkCall, { method: M }>[] {
    return this.calls.filter((c): c is Extract<SinkCall, { method: M }> => c.method === method);
  }

  /** The account's last sync state reported. */
  state(accountId: string): DirectorySyncState | undefined {
    return this.of('syncState')
      .filter((c) => c.accountId === accountId)
      .at(-1)?.state;
  }

  /** What the calls so far say of one chat (undefined: never named). */
  entry(accountId: string, chatId: string): DirectoryChat | undefined {
    let entry: DirectoryChat | undefined;
    for (const c of this.calls) {
      if (c.accountId !== accountId) continue;
      if (c.method === 'replaceAll') {
        const listed = c.chats.find((x) => x.chatId === chatId);
        if (listed) entry = { ...listed };
        else if (entry && (!c.scope || c.scope.kinds.includes(entry.kind))) entry = { ...entry, canSend: false, cannotSendReason: 'left' };
      } else if (c.method === 'upsert') {
        const named = c.chats.find((x) => x.chatId === chatId);
        if (named) entry = { ...named };
      } else if (c.method === 'patch' && c.chatId === chatId && entry) {
        entry = { ...entry, ...c.change };
      }
    }
    return entry;
  }
}
