// An account's chat directory on its card: where the sync stands (size, last sync, a platform's
// back-off with until when and why), a Sync chats button, and the chats themselves to search and
// page through. The directory is the API's synced copy: searching never calls the platform.
import { useState } from 'preact/hooks';
import { api, type Account, type DirectoryChat, type DirectoryState } from '../api.js';
import { ErrorNote, Pager } from '../components.js';
import { time } from '../format.js';
import { useSearchPages } from '../hooks.js';
import { Outside } from '../outside-text.js';

const REASONS: Record<string, string> = {
  announce_only: 'only admins post',
  left: 'the account left',
  removed: 'the account was removed',
  blocked: 'blocked',
  forbidden: 'forbidden',
  not_found: 'gone',
};
/** Why the account cannot post in a chat, in words. */
export const cannotSendText = (reason: string | null) => `can't post here${reason ? `: ${REASONS[reason] ?? reason.replace(/_/g, ' ')}` : ''}`;

/** The directory's state in one sentence. */
export function directoryText(d: DirectoryState): string {
  const last = d.lastSyncAt ? `, last synced ${time(d.lastSyncAt)}` : '';
  switch (d.status) {
    case 'never':
      return 'Chats not synced yet.';
    case 'syncing':
      return `Syncing chats… ${d.synced ?? 0} so far.`;
    case 'ok':
      return `${d.size} chats${last}.`;
    case 'backing_off':
      return `${d.size} chats${last}. The platform asked to slow down: the sync goes on${d.until ? ` at ${time(d.until)}` : ' later'}${d.reason ? ` (${d.reason})` : ''}.`;
    case 'unsupported':
      return `This platform cannot list its chats${d.reason ? ` (${d.reason})` : ''}: give chat ids by hand.`;
    case 'failed':
      return `${d.size} chats${last}. The last sync failed${d.reason ? `: ${d.reason}` : ''}.`;
  }
}

export function Directory({ account, onSynced }: { account: Account; onSynced: (a: Account) => void }) {
  const state = account.directory;
  const [open, setOpen] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const sync = async () => {
    setBusy(true);
    setFailure(null);
    try {
      const answer = await api.syncChats(account.id);
      onSynced({ ...account, directory: answer });
    } catch (err) {
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="directory" data-directory-status={state.status}>
      <p class={state.status === 'backing_off' || state.status === 'failed' ? 'warn' : 'muted'} role="status">
        {directoryText(state)}
      </p>
      <div class="actions">
        <button
          type="button"
          aria-label={`Sync chats of ${account.name}`}
          disabled={busy || state.status === 'syncing' || state.status === 'unsupported'}
          onClick={() => void sync()}
        >
          Sync chats
        </button>
        {state.status !== 'unsupported' && (
          <button type="button" aria-expanded={open} aria-label={`${open ? 'Hide' : 'Show'} chats of ${account.name}`} onClick={() => setOpen(!open)}>
            {open ? 'Hide chats' : 'Show chats'}
          </button>
        )}
      </div>
      <ErrorNote error={failure} />
      {open && <ChatList account={account} version={`${state.status}:${state.size}:${state.lastSyncAt ?? ''}`} />}
    </div>
  );
}

const PAGE = 20;

/** The directory's chats: a search box and pages of 20 (cursors kept to step back). */
function ChatList({ account, version }: { account: Account; version: string }) {
  const { query, setQuery, q, cursors, setCursors, page, error } = useSearchPages<DirectoryChat>(
    (q, cursor) => api.chats(account.id, { query: q, limit: PAGE, cursor }),
    version,
  );
  const searchId = `dir-${account.id}-search`;
  return (
    <div class="chat-list">
      <div class="field">
        <label for={searchId}>Search chats of {account.name}</label>
        <input id={searchId} type="search" autoComplete="off" placeholder="Title or chat id" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </div>
      <ErrorNote error={error} />
      {page && page.items.length === 0 && (
        <p>
          {q ? (
            <>
              No chat matches “<Outside>{q}</Outside>”.
            </>
          ) : (
            'No chats.'
          )}
        </p>
      )}
      {page && page.items.length > 0 && (
        <div class="table-wrap">
          <table class="chats" aria-label={`Chats of ${account.name}`}>
            <thead>
              <tr>
                <th>Title</th>
                <th>Chat id</th>
                <th>Kind</th>
                <th>Members</th>
                <th>Can post</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((c) => (
                <tr data-chat-id={c.chatId} class={c.canSend ? undefined : 'cannot-send'}>
                  <td>{c.title === null ? '—' : <Outside>{c.title}</Outside>}</td>
                  <td class="mono">
                    <Outside>{c.chatId}</Outside>
                  </td>
                  <td>{c.kind}</td>
                  <td>{c.memberCount ?? '—'}</td>
                  <td>{c.canSend ? 'yes' : cannotSendText(c.cannotSendReason)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager noun="chats" cursors={cursors} setCursors={setCursors} nextCursor={page?.nextCursor} />
    </div>
  );
}
