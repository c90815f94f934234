// Picks chats from an account's directory by name: type part of a title (or an id), and the
// matching chats show with their kind and members; a chat the account cannot post in is greyed
// with its reason and cannot be picked. The search waits for typing to pause (debounced).
import { useEffect, useState } from 'preact/hooks';
import { api, type DirectoryChat } from './api.js';
import { FieldNote, invalidProps } from './field.js';
import { useDebounced } from './hooks.js';
import { cannotSendText } from './pages/account-directory.js';
import { Outside } from './outside-text.js';

export interface PickedChat {
  chatId: string;
  title: string | null;
  /** a forum topic of the chat (Telegram's message_thread_id); absent: none */
  threadId?: number;
  /** values typed for the message's variables (personal messages); an empty one is none */
  vars?: Record<string, string>;
}

/** A variable the message uses, and the fallback a chat without a value gets (null: it needs one). */
export interface PickedVariable {
  name: string;
  fallback: string | null;
}

const RESULTS = 10;
export const chatName = (c: PickedChat) => c.title ?? c.chatId;
const members = (c: DirectoryChat) => (c.memberCount === null ? '' : c.kind === 'direct' ? '' : ` · ${c.memberCount} members`);

interface Props {
  /** The search input's id (its label says what the pick is for). */
  id: string;
  label: string;
  accountId: string;
  /** Chats already picked: shown as picked, not offered again. */
  picked: PickedChat[];
  onPick: (chat: PickedChat) => void;
}

export function ChatPicker({ id, label, accountId, picked, onPick }: Props) {
  const [query, setQuery] = useState('');
  const q = useDebounced(query.trim());
  const [results, setResults] = useState<DirectoryChat[] | null>(null);
  const [more, setMore] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    if (!q || !accountId) {
      setResults(null);
      return;
    }
    let live = true;
    api.chats(accountId, { query: q, limit: RESULTS }).then(
      (page) => live && (setResults(page.items), setMore(page.nextCursor !== null), setFailure(null)),
      (e: unknown) => live && (setResults(null), setFailure(e instanceof Error ? e.message : String(e))),
    );
    return () => {
      live = false;
    };
  }, [q, accountId]);
  // a chat picked into a topic may be picked again, for another topic or none
  const isPicked = (chatId: string) => picked.some((p) => p.chatId === chatId && !p.threadId);
  return (
    <div class="picker">
      <div class="field">
        <label for={id}>{label}</label>
        <input
          id={id}
          type="search"
          autoComplete="off"
          placeholder={accountId ? 'Part of a chat title or id' : 'Choose an account first'}
          disabled={!accountId}
          value={query}
          aria-describedby={`${id}-status`}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <span id={`${id}-status`} class={failure ? 'error' : 'muted'} role="status">
          {failure ??
            (results === null
              ? ''
              : results.length === 0
                ? `No chat matches “${q}”. Sync the account's chats on the Accounts page to find new ones.`
                : more
                  ? `First ${results.length} matches: type more to narrow.`
                  : `${results.length} found.`)}
        </span>
      </div>
      {results && results.length > 0 && (
        <ul class="picker-results" aria-label={`Chats matching ${q}`}>
          {results.map((c) => {
            const taken = isPicked(c.chatId);
            return (
              <li data-chat-id={c.chatId} class={c.canSend ? undefined : 'cannot-send'}>
                <button type="button" disabled={!c.canSend || taken} onClick={() => onPick({ chatId: c.chatId, title: c.title })}>
                  <span class="visually-hidden">Add </span>
                  <strong>
                    <Outside>{c.title ?? c.chatId}</Outside>
                  </strong>
                  <span class="muted">
                    {' '}
                    {c.kind}
                    {members(c)} · <Outside>{c.chatId}</Outside>
                  </span>
                  {!c.canSend && <span class="reason"> · {cannotSendText(c.cannotSendReason)}</span>}
                  {taken && <span class="muted"> · picked</span>}
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

interface PickedProps {
  label: string;
  picked: PickedChat[];
  onRemove: (index: number) => void;
  /** given: each picked chat gets a number field for its forum topic (Telegram), empty for none */
  onTopic?: ((index: number, threadId: number | undefined) => void) | undefined;
  /** the message's variables: each picked chat gets a field for each, to give it its own value */
  variables?: PickedVariable[];
  onVar?: (index: number, name: string, value: string) => void;
  /** the id of the field of picked chat `index` for a variable (its errors are keyed by it) */
  varId?: (index: number, name: string) => string;
  errors?: Map<string, string[]>;
  /** the values the chat has already (a loaded campaign's), shown until changed */
  varsOf?: (chat: PickedChat) => Record<string, string> | undefined;
}

/**
 * The picked chats, each with a remove button (and its topic field, with `onTopic`), and with
 * `variables` a field beside each chat for each variable: required where the message gives the
 * tag no fallback, else shown with the fallback a chat without a value gets.
 */
export function PickedChats({ label, picked, onRemove, onTopic, variables = [], onVar, varId, errors, varsOf }: PickedProps) {
  if (picked.length === 0) return null;
  return (
    <ul class="picked" aria-label={label}>
      {picked.map((c, i) => (
        <li data-chat-id={c.chatId}>
          <Outside>{chatName(c)}</Outside>
          {c.title && (
            <span class="muted mono">
              {' '}
              <Outside>{c.chatId}</Outside>
            </span>
          )}
          {onTopic && (
            <label class="topic">
              {' '}
              Topic{' '}
              <input
                type="number"
                min={1}
                step={1}
                inputMode="numeric"
                placeholder="none"
                aria-label={`Forum topic of ${chatName(c)}`}
                value={c.threadId ?? ''}
                onInput={(e) => {
                  const n = e.currentTarget.valueAsNumber;
                  onTopic(i, Number.isFinite(n) ? n : undefined);
                }}
              />
            </label>
          )}
          <button type="button" class="link" aria-label={`Remove ${chatName(c)}`} onClick={() => onRemove(i)}>
            Remove
          </button>
          {onVar &&
            varId &&
            variables.map((v) => {
              const id = varId(i, v.name);
              const value = c.vars?.[v.name] ?? varsOf?.(c)?.[v.name] ?? '';
              return (
                <span class="picked-var">
                  <label for={id}>
                    <span>
                      {v.name}
                      <span class="visually-hidden">
                        {' '}
                        for <Outside>{chatName(c)}</Outside>
                      </span>
                    </span>
                    <input
                      id={id}
                      type="text"
                      size={22}
                      autoComplete="off"
                      value={value}
                      required={v.fallback === null}
                      placeholder={v.fallback === null ? 'needed: no fallback' : `empty: “${v.fallback}”`}
                      onInput={(e) => onVar(i, v.name, e.currentTarget.value)}
                      {...invalidProps(id, errors?.get(id))}
                    />
                  </label>
                  <FieldNote id={id} errors={errors?.get(id)} />
                </span>
              );
            })}
        </li>
      ))}
    </ul>
  );
}
