// What a test is rendered as: one of the campaign's own chats (its targets, its audiences'
// members), found by title or name (GET /v1/campaigns/{id}/chats), with the values its message's
// variables take for that chat, and those that have none shown before the test goes.
import { useEffect, useState } from 'preact/hooks';
import { isBuiltinVariable } from '../../libs/core/src/chat-variables.js';
import { compileText } from '../../libs/core/src/message-template.js';
import { api, type Campaign, type CampaignChat } from './api.js';
import { FieldNote } from './field.js';
import { useDebounced } from './hooks.js';
import { Outside } from './outside-text.js';

/** Chats listed while nothing is typed, and matches once something is. */
const FIRST = 5;
const RESULTS = 10;

/** A variable the message uses, built-ins included; `fallback` null when some tag of it has none. */
export interface MessageVariable {
  name: string;
  fallback: string | null;
}

/** The variables the campaign's texts and captions use, by the API's own rule (libs/core compileText), in order of first use. */
export function messageVariables(messages: Campaign['messages']): MessageVariable[] {
  const found = new Map<string, MessageVariable>();
  for (const m of messages) {
    const compiled = compileText(m.type === 'text' ? m.text : (m.caption ?? ''));
    if (!compiled.ok || compiled.template === null) continue;
    for (const tag of compiled.template.tags.values()) {
      const seen = found.get(tag.name);
      if (!seen) found.set(tag.name, { name: tag.name, fallback: tag.fallback });
      else if (tag.fallback === null) seen.fallback = null;
    }
  }
  return [...found.values()];
}

/** A chat's name in the console's words: its title, else its id (with its topic). */
const campaignChatName = (c: CampaignChat) => `${c.title ?? c.chatId}${c.threadId ? ` (topic ${c.threadId})` : ''}`;

interface CampaignChatPickerProps {
  id: string;
  campaign: Campaign;
  onPick: (chat: CampaignChat) => void;
  /** the search's label: what the pick is for */
  label?: string;
  /** the words before a result's name on its button, for a screen reader */
  verb?: string;
}

/** The campaign's chats matching what is typed (the first ones while nothing is), each a button that picks it. */
export function CampaignChatPicker({
  id,
  campaign,
  onPick,
  label = "Render as one of the campaign's chats: find by name",
  verb = 'Render as',
}: CampaignChatPickerProps) {
  const [query, setQuery] = useState('');
  const q = useDebounced(query.trim());
  const [results, setResults] = useState<{ items: CampaignChat[]; more: boolean } | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api.campaignChats(campaign.id, q ? { query: q, limit: RESULTS } : { limit: FIRST }).then(
      (page) => live && (setResults({ items: page.items, more: page.nextCursor !== null }), setFailure(null)),
      (e: unknown) => live && (setResults(null), setFailure(e instanceof Error ? e.message : String(e))),
    );
    return () => {
      live = false;
    };
  }, [q, campaign.id]);
  const status =
    failure ??
    (results === null
      ? ''
      : results.items.length === 0
        ? q
          ? `None of the campaign's chats matches “${q}”.`
          : 'The campaign has no chats yet.'
        : results.more
          ? `First ${results.items.length}${q ? ' matches' : ''}: type part of a name to narrow.`
          : `${results.items.length} ${q ? 'found' : results.items.length === 1 ? 'chat' : 'chats'}.`);
  return (
    <div class="picker">
      <div class="field">
        <label for={id}>{label}</label>
        <input
          id={id}
          type="search"
          autoComplete="off"
          placeholder="Part of a title, a name or a chat id"
          value={query}
          aria-describedby={`${id}-status`}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <span id={`${id}-status`} class={failure ? 'error' : 'muted'} role="status">
          {status}
        </span>
      </div>
      {results && results.items.length > 0 && (
        <ul class="picker-results" aria-label="The campaign's chats">
          {results.items.map((c) => (
            <li data-chat-id={c.chatId}>
              <button type="button" onClick={() => onPick(c)}>
                <span class="visually-hidden">{verb} </span>
                <strong>
                  <Outside>{c.title ?? c.chatId}</Outside>
                </strong>
                <span class="muted">
                  {' '}
                  {c.from === 'target' ? 'target' : 'audience member'}
                  {c.threadId ? ` · topic ${c.threadId}` : ''}
                  {c.title !== null && (
                    <>
                      {' · '}
                      <Outside>{c.chatId}</Outside>
                    </>
                  )}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The value each variable takes: the chat's own, else its built-in, else the tag's fallback; null: none (it goes as written). */
function testValue(v: MessageVariable, chat: CampaignChat | null): { value: string; from: 'own' | 'directory' | 'fallback' } | null {
  const own = chat?.vars[v.name];
  if (own) return { value: own, from: 'own' };
  const builtin = chat?.builtins[v.name];
  if (builtin) return { value: builtin, from: 'directory' };
  return v.fallback === null ? null : { value: v.fallback, from: 'fallback' };
}

/** How many of the message's variables the test would send as written (no value, no fallback). */
function missingVariables(variables: MessageVariable[], chat: CampaignChat | null): MessageVariable[] {
  // without a chat, built-ins come from the test chat's directory entry: not judged here
  return variables.filter((v) => testValue(v, chat) === null && (chat !== null || !isBuiltinVariable(v.name)));
}

/** The message's variables as the test renders them for `chat` (none picked: no chat's values), a missing one marked. */
function RenderedVariables({ variables, chat }: { variables: MessageVariable[]; chat: CampaignChat | null }) {
  if (variables.length === 0) return null;
  const missing = new Set(missingVariables(variables, chat).map((v) => v.name));
  const label = chat ? `Variables as ${campaignChatName(chat)} gets them` : 'Variables without a chat';
  return (
    <table class="test-vars" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Variable</th>
          <th scope="col">Value in the test</th>
        </tr>
      </thead>
      <tbody>
        {variables.map((v) => {
          const got = testValue(v, chat);
          return (
            <tr data-variable={v.name} class={missing.has(v.name) ? 'missing' : undefined}>
              <th scope="row">
                <code>{`{{${v.name}}}`}</code>
              </th>
              <td>
                {got ? (
                  <>
                    <Outside>{got.value}</Outside>
                    {got.from !== 'own' && <span class="muted"> ({got.from === 'directory' ? "the chat directory's" : 'the fallback'})</span>}
                  </>
                ) : missing.has(v.name) ? (
                  <span class="error">missing: no value and no fallback, sent as written</span>
                ) : (
                  <span class="muted">the test chat's, from the chat directory</span>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

interface RenderAsProps {
  campaign: Campaign;
  variables: MessageVariable[];
  chat: CampaignChat | null;
  onChat: (chat: CampaignChat | null) => void;
  errors: string[] | undefined;
}

/** The test form's "render as": the chat picked (or the picker), its variables, and those the test would send as written. Nothing for a message without variables. */
export function RenderAs({ campaign, variables, chat: as, onChat, errors }: RenderAsProps) {
  if (variables.length === 0) return null;
  const missing = missingVariables(variables, as);
  return (
    <>
      {as ? (
        <div class="field">
          <span id="testAs-label" class="field-label">
            Rendered as
          </span>
          <ul class="picked" aria-labelledby="testAs-label">
            <li data-chat-id={as.chatId}>
              <Outside>{campaignChatName(as)}</Outside>
              {as.title !== null && (
                <span class="muted mono">
                  {' '}
                  <Outside>{as.chatId}</Outside>
                </span>
              )}
              <button type="button" class="link" aria-label={`Change from ${campaignChatName(as)} to another chat`} onClick={() => onChat(null)}>
                Change
              </button>
            </li>
          </ul>
        </div>
      ) : (
        <CampaignChatPicker id="testAs" campaign={campaign} onPick={onChat} />
      )}
      <FieldNote id="testAs" errors={errors} />
      <RenderedVariables variables={variables} chat={as} />
      {missing.length > 0 && (
        <p class="warn" id="testAs-missing">
          {missing.map((v) => `{{${v.name}}}`).join(', ')}{' '}
          {as ? (
            <>
              {missing.length === 1 ? 'has' : 'have'} no value for <Outside>{campaignChatName(as)}</Outside> and no fallback
            </>
          ) : (
            <>{missing.length === 1 ? 'has' : 'have'} no value without one of the campaign's chats</>
          )}
          : the test shows {missing.length === 1 ? 'it' : 'them'} as written.
        </p>
      )}
    </>
  );
}
