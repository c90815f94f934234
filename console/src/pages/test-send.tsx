// Send a test: the campaign's message, rendered with the variables of one of its chats (or none),
// sent to one chat the operator picks before the campaign goes live. It goes as a run of its own
// (trigger `test`), paced like any send, never counted in the campaign's runs' sends, and shows
// in the run history.
import { useMemo, useState } from 'preact/hooks';
import { api, ApiError, type Campaign, type CampaignChat, type Run } from '../api.js';
import { withTopic } from '../campaign-draft.js';
import { ChatPicker, chatName, PickedChats, type PickedChat } from '../chat-picker.js';
import { ErrorNote } from '../components.js';
import { FieldNote, invalidProps } from '../field.js';
import { href } from '../router.js';
import { Outside } from '../outside-text.js';
import { messageVariables, RenderAs } from '../test-as.js';

export function TestSend({ campaign, onSent }: { campaign: Campaign; onSent: (run: Run) => void }) {
  const [picked, setPicked] = useState<PickedChat | null>(null);
  const [typed, setTyped] = useState('');
  const [as, setAs] = useState<CampaignChat | null>(null);
  const [errors, setErrors] = useState<Map<string, string[]>>(new Map());
  const [failure, setFailure] = useState<unknown>(null);
  const [sent, setSent] = useState<{ run: Run; to: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const chatId = picked?.chatId ?? typed.trim();
  const variables = useMemo(() => messageVariables(campaign.messages), [campaign.messages]);

  const send = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFailure(null);
    setSent(null);
    try {
      const threadId = picked?.threadId;
      const run = await api.testSend(campaign.id, { chatId, ...(threadId && { threadId }), ...(as && variables.length > 0 && { asChatId: as.chatId }) });
      setErrors(new Map());
      setSent({ run, to: picked ? chatName(picked) : chatId });
      onSent(run);
    } catch (err) {
      if (err instanceof ApiError && err.details.length) {
        const placed = new Map<string, string[]>();
        for (const d of err.details) {
          const key = d.field === 'asChatId' ? 'testAs' : d.field === 'chatId' || d.field === 'threadId' ? 'testChatId' : 'form';
          placed.set(key, [...(placed.get(key) ?? []), key === 'form' ? `${d.field}: ${d.message}` : d.message]);
        }
        setErrors(placed);
      } else {
        setErrors(new Map());
        setFailure(err);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="test-send" aria-labelledby="test-send-title" noValidate onSubmit={(e) => void send(e)}>
      <h2 id="test-send-title">Send a test</h2>
      <p class="muted">The message goes to one chat you pick, rendered as one of the campaign's chats would get it. The campaign's runs do not count it.</p>
      {picked ? (
        <PickedChats label="Test chat" picked={[picked]} onRemove={() => setPicked(null)} onTopic={(_, threadId) => setPicked(withTopic(picked, threadId))} />
      ) : (
        <>
          <ChatPicker id="testChat" label="Test chat: find by name" accountId={campaign.accountId} picked={[]} onPick={(c) => setPicked(c)} />
          <div class="field">
            <label for="testChatId">Or its chat id</label>
            <input
              id="testChatId"
              type="text"
              autoComplete="off"
              spellcheck={false}
              value={typed}
              onInput={(e) => setTyped(e.currentTarget.value)}
              {...invalidProps('testChatId', errors.get('testChatId'))}
            />
          </div>
        </>
      )}
      <FieldNote id="testChatId" errors={errors.get('testChatId')} />
      <RenderAs campaign={campaign} variables={variables} chat={as} onChat={setAs} errors={errors.get('testAs')} />
      {errors.get('form') && (
        <p class="error" role="alert">
          {errors.get('form')!.join('; ')}
        </p>
      )}
      <ErrorNote error={failure} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy || !chatId}>
          Send test
        </button>
        {sent && (
          <span role="status">
            Test sent to <Outside>{sent.to}</Outside>: <a href={href.run(sent.run.id)}>its run</a>.
          </span>
        )}
      </div>
    </form>
  );
}
