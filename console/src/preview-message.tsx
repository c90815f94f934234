// The campaign's message as one of its chats receives it, under the form's Preview: each part as
// the API renders it (the sender's own rule), every variable's value marked with where it came
// from, a fallback's highlighted; and the choice of the chat it is rendered for.
import type { Campaign, CampaignChat, PreviewMessage, PreviewSpan } from './api.js';
import { Outside } from './outside-text.js';
import { CampaignChatPicker } from './test-as.js';

/** A chat the preview may be rendered for: a target (chat and topic) with the name the operator knows it by. */
export interface PreviewChoice {
  chatId: string;
  threadId?: number;
  /** its title where the form knows one, else its id */
  name: string;
}

const choiceKey = (c: { chatId: string; threadId?: number | null }) => (c.threadId ? `${c.chatId}\u001f${c.threadId}` : c.chatId);
const inWords = (c: { name: string; threadId?: number | null }) => (c.threadId ? `${c.name} (topic ${c.threadId})` : c.name);

const SOURCE: Record<NonNullable<PreviewSpan['from']>, string> = {
  own: "the chat's own",
  directory: 'the chat directory',
  fallback: 'fallback',
  missing: 'no value and no fallback: sent as written',
};

/** One stretch of a part: text as written, or a variable's value marked with its source (a fallback highlighted). */
function Span({ span }: { span: PreviewSpan }) {
  if (span.variable === null || span.from === null) return <Outside>{span.text}</Outside>;
  if (span.from === 'fallback') {
    return (
      <mark class="var-fallback" data-variable={span.variable} title={`fallback: ${span.text}`}>
        <Outside>{span.text}</Outside>
      </mark>
    );
  }
  return (
    <span class={`var-${span.from}`} data-variable={span.variable} title={`${span.variable}: ${SOURCE[span.from]}`}>
      <Outside>{span.text}</Outside>
    </span>
  );
}

interface Props {
  message: PreviewMessage;
  /** the chats the form lists (its targets), to choose among */
  choices: PreviewChoice[];
  /** the campaign as saved, whose chats (audience members included) may be found by name; null: not saved yet */
  campaign: Campaign | null;
  onChoose: (chat: { chatId: string; threadId?: number }) => void;
  busy: boolean;
}

/** The message as `message`'s chat receives it, with where each variable came from, and the choice of another chat. */
export function PreviewMessageView({ message, choices, campaign, onChoose, busy }: Props) {
  const shown = inWords({ name: message.title ?? message.chatId, threadId: message.threadId });
  // the chat shown is always one of the options, an audience member included
  const options = choices.some((c) => choiceKey(c) === choiceKey(message))
    ? choices
    : [{ chatId: message.chatId, ...(message.threadId && { threadId: message.threadId }), name: message.title ?? message.chatId }, ...choices];
  // each variable's value once, however often its tag appears
  const filled = [
    ...new Map(
      message.parts.flatMap((p) => p.spans.filter((s) => s.variable !== null && s.from !== null).map((s) => [`${s.variable}\u0000${s.text}`, s])),
    ).values(),
  ];
  return (
    <>
      <h3 id="preview-message-title">
        Message as <Outside>{shown}</Outside>
      </h3>
      <div class="field">
        <label for="previewAs">Show the message as</label>
        <select
          id="previewAs"
          disabled={busy}
          value={choiceKey(message)}
          onChange={(e) => {
            const chosen = options.find((c) => choiceKey(c) === e.currentTarget.value);
            if (chosen) onChoose({ chatId: chosen.chatId, ...(chosen.threadId && { threadId: chosen.threadId }) });
          }}
        >
          {options.map((c) => (
            <option value={choiceKey(c)}>{inWords(c)}</option>
          ))}
        </select>
      </div>
      {campaign && (
        <CampaignChatPicker
          id="previewFind"
          campaign={campaign}
          label="Or find one of the saved campaign's chats by name"
          verb="Show the message as"
          onPick={(c: CampaignChat) => onChoose({ chatId: c.chatId, ...(c.threadId && { threadId: c.threadId }) })}
        />
      )}
      <div class="rendered-message" role="group" aria-labelledby="preview-message-title">
        {message.parts.map((p, i) => (
          <p class="rendered-part" data-part={i}>
            {p.type === 'media' && <span class="muted">{p.text === null ? '[media, no caption]' : '[media] '}</span>}
            {p.spans.map((s) => (
              <Span span={s} />
            ))}
          </p>
        ))}
      </div>
      {filled.length > 0 && (
        <ul class="filled-from" aria-label="Where each variable's value came from">
          {filled.map((s) => (
            <li class={s.from === 'fallback' ? 'fallback' : undefined}>
              <code>{`{{${s.variable}}}`}</code>: <Outside>{s.text}</Outside> <span class="muted">({SOURCE[s.from!]})</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
