// Create and edit a campaign. The API judges the input: its field errors are shown beside the
// inputs they name, the first of them takes focus, and what was typed stays as typed. Editing
// sends only the fields that changed (PATCH).
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Campaign, type CampaignPreview, type CampaignReach, type Me } from '../api.js';
import {
  allTargets,
  createBody,
  draftOf,
  emptyDraft,
  fieldOrder,
  keyInWords,
  patchBody,
  pickedVarId,
  placeErrors,
  targetKey,
  usedVariables,
  withTopic,
  withVar,
  type Draft,
  type FieldId,
} from '../campaign-draft.js';
import { ErrorNote, NotLoaded } from '../components.js';
import { FieldNote, invalidProps } from '../field.js';
import { useNames } from '../hooks.js';
import { AudiencePicker } from '../audience-picker.js';
import { ChatPicker, PickedChats } from '../chat-picker.js';
import { MessageParts } from '../message-parts.js';
import { PreviewNote } from '../occurrences.js';
import { PreviewMessageView, type PreviewChoice } from '../preview-message.js';
import { sendsSoon, SendNowQuestion } from '../send-now.js';
import { href } from '../router.js';
import { Outside } from '../outside-text.js';
import { Schedule } from '../schedule-fields.js';

export function CampaignFormPage({ id, me }: { id?: string; me: Me }) {
  const [campaign, setCampaign] = useState<Campaign | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (id) api.campaign(id).then(setCampaign, setError);
  }, [id]);
  if (id && !campaign) return <NotLoaded what="Campaign" error={error} />;
  return <CampaignForm campaign={campaign} me={me} />;
}

function CampaignForm({ campaign, me }: { campaign: Campaign | null; me: Me }) {
  const names = useNames();
  const initial = useRef<Draft>(campaign ? draftOf(campaign) : emptyDraft());
  const [draft, setDraft] = useState<Draft>(initial.current);
  const [errors, setErrors] = useState<Map<FieldId, string[]>>(new Map());
  const [failure, setFailure] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [preview, setPreview] = useState<CampaignPreview | null>(null);
  // the chat the preview's message is rendered for (null: the API's default, the first target)
  const [previewAs, setPreviewAs] = useState<{ chatId: string; threadId?: number } | null>(null);
  // the Preview button moves focus to the preview; choosing its chat leaves focus on the choice
  const focusPreview = useRef(false);
  // a save that would send within a minute waits for the operator's yes, with the reach it asked about
  const [asking, setAsking] = useState<CampaignReach | null>(null);
  const form = useRef<HTMLFormElement>(null);
  const accounts = [...names.accounts.values()];

  // A new campaign starts on the only account there is.
  useEffect(() => {
    if (!campaign && !draft.accountId && accounts.length === 1) setDraft((d) => ({ ...d, accountId: accounts[0]!.id }));
  }, [accounts.length]);
  // After an answer with errors, the first invalid input (in the form's order) takes focus. A layout
  // effect runs in the same task as the render that shows the errors, so no one (a keyboard user or
  // a test) ever sees the error text while focus is still on the Save button.
  useLayoutEffect(() => {
    if (errors.size === 0) return;
    const first = fieldOrder(draft).find((f) => errors.has(f));
    const el = first ? form.current?.querySelector<HTMLElement>(`#${first}`) : form.current?.querySelector<HTMLElement>('#form-error');
    el?.focus();
  }, [errors]);

  // a preview (or a question about sending now) describes the form as it was: any change retires it
  useEffect(() => {
    setPreview(null);
    setAsking(null);
  }, [draft]);
  useLayoutEffect(() => {
    if (preview && focusPreview.current) form.current?.querySelector<HTMLElement>('#preview')?.focus();
    focusPreview.current = false;
  }, [preview]);
  useLayoutEffect(() => {
    if (asking) form.current?.querySelector<HTMLElement>('#send-now')?.focus();
  }, [asking]);

  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }));
  const text = (key: keyof Draft) => ({
    id: key,
    value: draft[key] as string,
    onInput: (e: Event) => set(key)((e.currentTarget as HTMLInputElement).value as never),
    ...invalidProps(key, errors.get(key)),
  });
  const note = (key: FieldId) => <FieldNote id={key} errors={errors.get(key)} />;
  const tenantOfAccount = me.admin ? names.accounts.get(draft.accountId)?.tenantId : undefined;

  const showPreview = async (as = previewAs, focus = true) => {
    setBusy(true);
    setFailure(null);
    setNotice(null);
    try {
      const body = createBody(draft, tenantOfAccount);
      // a chat chosen before that the form no longer lists: the default chat instead
      const answer = await api.previewCampaign(body, as).catch((err: unknown) => {
        if (as && err instanceof ApiError && err.details.length > 0 && err.details.every((d) => d.field === 'chatId')) return api.previewCampaign(body);
        throw err;
      });
      setErrors(new Map());
      setPreviewAs(answer.message ? { chatId: answer.message.chatId, ...(answer.message.threadId && { threadId: answer.message.threadId }) } : null);
      focusPreview.current = focus;
      setPreview(answer);
    } catch (err) {
      if (err instanceof ApiError && err.details.length > 0) setErrors(placeErrors(err.details, draft));
      else setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  // A save that leaves the campaign active with its schedule, window or activity changed may
  // start a run at once: the preview (validated as a create) says when, and how many chats.
  const mayStartNow = (body: Record<string, unknown>) =>
    draft.active && (!campaign || ['active', 'schedule', 'timezone', 'deliveryWindow'].some((k) => k in body));

  const submit = async (e: Event | null, confirmed = false) => {
    e?.preventDefault();
    setBusy(true);
    setFailure(null);
    setNotice(null);
    setAsking(null);
    try {
      const body = campaign ? patchBody(initial.current, draft) : createBody(draft, tenantOfAccount);
      if (campaign && Object.keys(body).length === 0) {
        setErrors(new Map());
        setNotice('Nothing changed.');
        return;
      }
      if (!confirmed && mayStartNow(body)) {
        // a body the preview refuses goes on to the save, whose own answer names the fields
        const ahead = await api.previewCampaign(createBody(draft, tenantOfAccount)).catch((err: unknown) => {
          if (err instanceof ApiError && err.status === 400) return null;
          throw err;
        });
        if (ahead && sendsSoon(ahead.occurrences)) {
          setErrors(new Map());
          setAsking(ahead.reach);
          return;
        }
      }
      if (campaign) {
        await api.patchCampaign(campaign.id, body);
        location.hash = href.campaign(campaign.id);
      } else {
        const created = await api.createCampaign(body as ReturnType<typeof createBody>);
        location.hash = href.campaign(created.id);
      }
    } catch (err) {
      if (err instanceof ApiError && err.details.length > 0) setErrors(placeErrors(err.details, draft));
      else {
        setErrors(new Map());
        setFailure(err);
      }
    } finally {
      setBusy(false);
    }
  };

  const title = campaign ? `Edit ${campaign.name}` : 'New campaign';
  const formErrors = errors.get('form');
  return (
    <section aria-labelledby="form-title">
      <p>
        <a href={campaign ? href.campaign(campaign.id) : href.campaigns()}>← {campaign ? campaign.name : 'Campaigns'}</a>
      </p>
      <h1 id="form-title">{title}</h1>
      <form ref={form} class="campaign-form" noValidate onSubmit={(e) => void submit(e)}>
        {(errors.size > 0 || failure !== null) && (
          <p id="form-error" class="error" role="alert" tabIndex={-1}>
            {errors.size > 0 ? `The campaign was not saved: ${fixes(errors)}.` : 'The campaign was not saved.'}
            {formErrors && ` ${formErrors.join('; ')}`}
          </p>
        )}
        <ErrorNote error={failure} />
        <fieldset>
          <legend>Campaign</legend>
          <div class="field">
            <label for="name">Name</label>
            <input type="text" autoComplete="off" {...text('name')} />
            {note('name')}
          </div>
          <div class="field">
            <label for="accountId">Account</label>
            <select {...text('accountId')} onChange={(e) => setDraft((d) => ({ ...d, accountId: e.currentTarget.value, picked: [] }))}>
              <option value="">Choose an account</option>
              {accounts.map((a) => (
                <option value={a.id}>
                  {a.name} ({a.platform}, {a.status})
                </option>
              ))}
            </select>
            {note('accountId')}
          </div>
          <ChatPicker
            id="chatSearch"
            label="Find chats by name"
            accountId={draft.accountId}
            picked={draft.picked}
            onPick={(c) => set('picked')([...draft.picked, c])}
          />
          <PickedChats
            label="Picked chats"
            picked={draft.picked}
            onRemove={(index) => set('picked')(draft.picked.filter((_, i) => i !== index))}
            onTopic={(index, threadId) => set('picked')(draft.picked.map((p, i) => (i === index ? withTopic(p, threadId) : p)))}
            variables={usedVariables(draft)}
            onVar={(index, name, value) => set('picked')(draft.picked.map((p, i) => (i === index ? withVar(p, name, value) : p)))}
            varId={pickedVarId}
            errors={errors}
            varsOf={(c) => draft.chatVars[targetKey(c)]}
          />
          <div class="field">
            <label for="targets">Chats (one chat id a line)</label>
            <textarea rows={6} spellcheck={false} {...text('targets')} />
            {note('targets')}
            <ChatVarsNote chatVars={draft.chatVars} />
          </div>
        </fieldset>
        <AudiencePicker value={draft.audienceIds} onChange={set('audienceIds')} tenantId={tenantOfAccount} errors={errors.get('audienceIds')} />
        <MessageParts parts={draft.parts} onChange={set('parts')} errors={errors} tenantId={tenantOfAccount} mediaMaxBytes={me.limits.mediaMaxBytes} />
        <Schedule draft={draft} text={text} note={note} set={set} errors={errors} />
        <fieldset>
          <legend>Status</legend>
          <div class="check">
            <input
              id="active"
              type="checkbox"
              checked={draft.active}
              onChange={(e) => set('active')(e.currentTarget.checked)}
              {...invalidProps('active', errors.get('active'))}
            />
            <label for="active">Active: the schedule makes runs</label>
          </div>
          {note('active')}
          {!campaign && <p class="muted">A new campaign starts inactive: nothing is sent until you activate it, and sending at once asks first.</p>}
          <div class="check">
            <input
              id="autoResume"
              type="checkbox"
              checked={draft.autoResume}
              onChange={(e) => set('autoResume')(e.currentTarget.checked)}
              {...invalidProps('autoResume', errors.get('autoResume'))}
            />
            <label for="autoResume">Auto resume: a run paused at window close resumes when the window opens again</label>
          </div>
          {note('autoResume')}
        </fieldset>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {campaign ? 'Save changes' : 'Create campaign'}
          </button>
          <button type="button" disabled={busy} onClick={() => void showPreview(previewAs)}>
            Preview
          </button>
          <a href={campaign ? href.campaign(campaign.id) : href.campaigns()}>Cancel</a>
          {notice && <span role="status">{notice}</span>}
        </div>
        {asking && (
          <SendNowQuestion
            reach={asking}
            yes={campaign ? 'Yes, save and send now' : 'Yes, create and send now'}
            onYes={() => void submit(null, true)}
            onNo={() => setAsking(null)}
          />
        )}
        {preview && (
          <PreviewNote preview={preview} zone={draft.timezone}>
            {preview.message && (
              <PreviewMessageView
                message={preview.message}
                choices={previewChoices(draft)}
                campaign={campaign}
                busy={busy}
                onChoose={(as) => void showPreview(as, false)}
              />
            )}
          </PreviewNote>
        )}
      </form>
    </section>
  );
}

/** The chats the preview may be rendered for: the form's targets, picked ones by their titles. */
const previewChoices = (d: Draft): PreviewChoice[] =>
  allTargets(d).map((t) => {
    const title = d.picked.find((p) => targetKey(p) === targetKey(t))?.title;
    return { chatId: t.chatId, ...(t.threadId && { threadId: t.threadId }), name: title ?? t.chatId };
  });

const fixes = (errors: Map<FieldId, string[]>) => (errors.size === 1 ? 'one field to fix' : `${errors.size} fields to fix`);

/**
 * The loaded campaign's chat variables (personal messages), which the form does not edit: they
 * are set through the API, and each stays with its chat while the chat stays listed.
 */
function ChatVarsNote({ chatVars }: { chatVars: Record<string, Record<string, string>> }) {
  const chats = Object.keys(chatVars);
  if (chats.length === 0) return null;
  const shown = chats.slice(0, 5).map((c, i) => (
    <>
      {i > 0 && ', '}
      <Outside>{keyInWords(c)}</Outside> ({Object.keys(chatVars[c]!).sort().join(', ') || 'none'})
    </>
  ));
  return (
    <p class="muted" id="targets-vars">
      Variables for {'{{name}}'} tags are set per chat through the API (a tag with a fallback, {'{{name|friends}}'}, needs none). {chats.length} of these chats
      have them and keep them while they stay listed: {shown}
      {chats.length > 5 ? `, and ${chats.length - 5} more` : ''}.
    </p>
  );
}
