// One audience: its members (chat id and variables) with search and paging, a CSV import with a
// preview first, the CSV export, removing members, renaming, and deleting the audience.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Audience, type AudienceMember } from '../api.js';
import { ErrorNote, NotLoaded, Pager } from '../components.js';
import { downloadCsv } from '../csv.js';
import { CsvImport } from '../csv-import.js';
import { time } from '../format.js';
import { useSearchPages } from '../hooks.js';
import { href } from '../router.js';
import { Outside } from '../outside-text.js';

const PAGE = 50;

export function AudiencePage({ id }: { id: string }) {
  const [audience, setAudience] = useState<Audience | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState<string | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [confirming, setConfirming] = useState(false);
  useEffect(() => {
    api.audience(id).then(setAudience, setError);
  }, [id, version]);
  if (!audience) return <NotLoaded what="Audience" error={error} back={{ href: href.audiences(), label: '← Audiences' }} />;

  const act = async (what: () => Promise<unknown>, done: string) => {
    setFailure(null);
    setNotice(null);
    try {
      await what();
      setNotice(done);
      setVersion((v) => v + 1);
    } catch (e) {
      setFailure(e);
    }
  };
  const exportCsv = () =>
    act(async () => downloadCsv(`${audience.name.replace(/[^\w.-]+/g, '_') || 'audience'}.csv`, await api.exportMembers(audience.id)), 'Exported.');
  const remove = async () => {
    try {
      await api.deleteAudience(audience.id);
      location.hash = href.audiences();
    } catch (e) {
      setFailure(e);
      setConfirming(false);
    }
  };
  return (
    <section aria-labelledby="audience-title">
      <p>
        <a href={href.audiences()}>← Audiences</a>
      </p>
      <h1 id="audience-title">
        <Outside>{audience.name}</Outside>
      </h1>
      <p class="muted">
        {audience.memberCount} chats · updated {time(audience.updatedAt)}
      </p>
      <Rename audience={audience} onRenamed={setAudience} />
      <div class="actions">
        <button type="button" onClick={() => void exportCsv()}>
          Export CSV
        </button>
        {confirming ? (
          <span role="group" aria-label="Confirm delete audience">
            Delete this audience? Campaigns stop sending to it; runs already made keep their chats.{' '}
            <button type="button" class="danger" onClick={() => void remove()}>
              Yes, delete audience
            </button>{' '}
            <button type="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </span>
        ) : (
          <button type="button" onClick={() => setConfirming(true)}>
            Delete audience
          </button>
        )}
        {notice && <span role="status">{notice}</span>}
      </div>
      <ErrorNote error={failure} />
      {failure instanceof ApiError && failure.details.length > 0 && (
        <ul class="problems error">
          {failure.details.map((d) => (
            <li>{d.message}</li>
          ))}
        </ul>
      )}
      <h2>Import chats</h2>
      <CsvImport id="aud-csv" audience={audience} onImported={(a) => (setAudience(a), setVersion((v) => v + 1))} />
      <h2>Chats</h2>
      <Members audience={audience} version={version} onRemoved={() => act(async () => undefined, 'Removed.')} />
    </section>
  );
}

function Rename({ audience, onRenamed }: { audience: Audience; onRenamed: (a: Audience) => void }) {
  const [name, setName] = useState(audience.name);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      onRenamed(await api.patchAudience(audience.id, { name }));
    } catch (err) {
      setError(err instanceof ApiError ? (err.details.find((d) => d.field === 'name')?.message ?? err.message) : String(err));
    }
  };
  return (
    <form class="inline-form" noValidate onSubmit={(e) => void submit(e)}>
      <label for="rename">Name</label>
      <input
        id="rename"
        type="text"
        value={name}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? 'rename-error' : undefined}
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <button type="submit" disabled={name === audience.name}>
        Rename
      </button>
      {error && (
        <span id="rename-error" class="error">
          {error}
        </span>
      )}
    </form>
  );
}

function Members({ audience, version, onRemoved }: { audience: Audience; version: number; onRemoved: () => void }) {
  const { query, setQuery, q, cursors, setCursors, page, error, setError } = useSearchPages<AudienceMember>(
    (q, cursor) => api.members(audience.id, { query: q, limit: PAGE, cursor }),
    `${audience.id}:${version}`,
  );
  const columns = [...new Set((page?.items ?? []).flatMap((m) => Object.keys(m.vars ?? {})))];
  const remove = async (chatId: string) => {
    try {
      await api.removeMembers(audience.id, [chatId]);
      onRemoved();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="members">
      <div class="field narrow">
        <label for="member-search">Search chats</label>
        <input id="member-search" type="search" autoComplete="off" placeholder="Chat id" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </div>
      <ErrorNote error={error} />
      {page && page.items.length === 0 && <p>{q ? `No chat matches “${q}”.` : 'No chats yet: import a CSV file above.'}</p>}
      {page && page.items.length > 0 && (
        <div class="table-wrap">
          <table aria-label={`Chats of ${audience.name}`}>
            <thead>
              <tr>
                <th>Chat id</th>
                {columns.map((c) => (
                  <th>{c}</th>
                ))}
                <th>
                  <span class="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((m) => (
                <tr data-chat-id={m.chatId}>
                  <td class="mono">
                    <Outside>{m.chatId}</Outside>
                  </td>
                  {columns.map((c) => (
                    <td>
                      <Outside>{m.vars?.[c] ?? ''}</Outside>
                    </td>
                  ))}
                  <td>
                    <button type="button" class="link" aria-label={`Remove ${m.chatId}`} onClick={() => void remove(m.chatId)}>
                      Remove
                    </button>
                  </td>
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
