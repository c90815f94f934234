// Campaigns: the list, and one campaign with its schedule in words, its run history and commands.
import { useEffect, useState } from 'preact/hooks';
import { allPages, api, type Campaign, type CampaignReach, type Me, type Occurrence, type Run } from '../api.js';
import { ErrorNote, NotLoaded } from '../components.js';
import { relative, time } from '../format.js';
import { useLive, useNames } from '../hooks.js';
import { href } from '../router.js';
import { NextOccurrences } from '../occurrences.js';
import { RunItem } from './activity.js';
import { TestSend } from './test-send.js';
import { Outside } from '../outside-text.js';
import { ReachBreakdown, sendsSoon, SendNowQuestion } from '../send-now.js';

export function Campaigns() {
  const names = useNames();
  const [campaigns, setCampaigns] = useState<Campaign[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useLive(
    async (current) => {
      try {
        const all = await allPages((cursor) => api.campaigns({ limit: 500, cursor }));
        if (current()) setCampaigns(all);
      } catch (e) {
        if (current()) setError(e);
      }
    },
    () => true,
    [],
  );
  return (
    <section aria-labelledby="campaigns-title">
      <h1 id="campaigns-title">Campaigns</h1>
      <p>
        <a class="button primary" href={href.newCampaign()}>
          New campaign
        </a>
      </p>
      <ErrorNote error={error} />
      {campaigns?.length === 0 && <p>No campaigns yet.</p>}
      <ul class="cards">
        {(campaigns ?? []).map((c) => (
          <li class="card">
            <a href={href.campaign(c.id)} class="run-name">
              {c.name}
            </a>{' '}
            <span class={`pill ${c.active ? 'pill-success' : 'pill-cancelled'}`}>{c.active ? 'Active' : 'Inactive'}</span>
            <p>{c.scheduleText}</p>
            <p class="muted">
              {names.accounts.get(c.accountId)?.name ?? ''} · {c.targets.length} chats · next run{' '}
              {c.nextRunAt ? `${time(c.nextRunAt)} (${relative(c.nextRunAt)})` : 'none'}
            </p>
            {c.lastError && <p class="error">{c.lastError}</p>}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function CampaignPage({ id, me }: { id: string; me: Me }) {
  const names = useNames();
  const [campaign, setCampaign] = useState<Campaign | null>(null);
  const [runs, setRuns] = useState<Run[]>([]);
  const [occurrences, setOccurrences] = useState<Occurrence[] | null>(null);
  const [reach, setReach] = useState<CampaignReach | null>(null);
  // an activation that would send within a minute waits for a yes, asked with the reach
  const [asking, setAsking] = useState<CampaignReach | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const reload = async (current: () => boolean) => {
    try {
      const [c, page, next, r] = await Promise.all([api.campaign(id), api.runs({ campaignId: id, limit: 20 }), api.occurrences(id, 5), api.reach(id)]);
      if (!current()) return;
      setCampaign(c);
      setRuns(page.items);
      setOccurrences(next.items);
      setReach(r);
      setError(null);
    } catch (e) {
      if (current()) setError(e);
    }
  };
  useLive(reload, (e) => 'campaignId' in e && e.campaignId === id, [id]);
  const act = async (what: () => Promise<unknown>, done: string) => {
    setNotice(null);
    try {
      await what();
      // the notice follows the reload, so it never stands beside facts the change has not reached yet
      await reload(() => true);
      setNotice(done);
    } catch (e) {
      setError(e);
    }
  };
  const activate = () => act(() => api.patchCampaign(id, { active: true }), 'Campaign activated.');
  // Asks first when the activation would start a run within a minute (as the API plans it).
  const askToActivate = async () => {
    setNotice(null);
    try {
      const [ahead, now] = await Promise.all([api.occurrences(id, 1, true), api.reach(id)]);
      setReach(now);
      if (sendsSoon(ahead.items)) setAsking(now);
      else await activate();
    } catch (e) {
      setError(e);
    }
  };
  if (!campaign) return <NotLoaded what="Campaign" error={error} />;
  const replace = (r: Run) => setRuns((list) => list.map((x) => (x.id === r.id ? r : x)));
  return (
    <section aria-labelledby="campaign-title">
      <p>
        <a href={href.campaigns()}>← Campaigns</a>
      </p>
      <h1 id="campaign-title">{campaign.name}</h1>
      <p class="schedule">{campaign.scheduleText}</p>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>{campaign.active ? 'Active' : 'Inactive'}</dd>
        </div>
        <div>
          <dt>Next run</dt>
          <dd>{campaign.nextRunAt ? `${time(campaign.nextRunAt)} (${relative(campaign.nextRunAt)})` : 'none'}</dd>
        </div>
        <div>
          <dt>Account</dt>
          <dd>{names.accounts.get(campaign.accountId)?.name ?? campaign.accountId.slice(0, 8)}</dd>
        </div>
        <div>
          <dt>Reach</dt>
          <dd>{reach ? <ReachBreakdown reach={reach} /> : '…'}</dd>
        </div>
        {campaign.audienceIds.length > 0 && (
          <div>
            <dt>Audiences</dt>
            <dd>{campaign.audienceIds.length}</dd>
          </div>
        )}
        <ChatVariables campaignId={campaign.id} targets={campaign.targets} />
        <div>
          <dt>Messages</dt>
          <dd>{campaign.messages.map((m) => (m.type === 'text' ? m.text : `media${m.caption ? `: ${m.caption}` : ''}`)).join(' · ')}</dd>
        </div>
        <div>
          <dt>Auto resume</dt>
          <dd>{campaign.autoResume ? 'yes, when the window opens again' : 'no'}</dd>
        </div>
      </dl>
      {campaign.lastError && <p class="error">{campaign.lastError}</p>}
      <div class="actions">
        <button type="button" class="primary" onClick={() => void act(() => api.runNow(id), 'Run started.')}>
          Run now
        </button>
        <a class="button" href={href.editCampaign(id)}>
          Edit
        </a>
        {campaign.active ? (
          <Confirmed
            label="Deactivate"
            question="Deactivate it? The schedule stops making runs; runs already open go on."
            yes="Yes, deactivate"
            onYes={() => act(() => api.patchCampaign(id, { active: false }), 'Campaign deactivated.')}
          />
        ) : (
          <button type="button" onClick={() => void askToActivate()}>
            Activate
          </button>
        )}
        <Confirmed
          label="Delete"
          question="Delete it? It disappears from the list and its open runs are cancelled."
          yes="Yes, delete"
          onYes={() => api.deleteCampaign(id).then(() => void (location.hash = href.campaigns()), setError)}
        />
      </div>
      {asking && (
        <SendNowQuestion
          reach={asking}
          yes="Yes, activate and send now"
          onYes={() => {
            setAsking(null);
            void activate();
          }}
          onNo={() => setAsking(null)}
        />
      )}
      {notice && <p role="status">{notice}</p>}
      <ErrorNote error={error} />
      <TestSend campaign={campaign} onSent={() => void reload(() => true)} />
      <h2>Next occurrences ({campaign.timezone})</h2>
      <NextOccurrences items={occurrences} zone={campaign.timezone} />
      <h2>Run history</h2>
      {runs.length === 0 && <p>No runs yet.</p>}
      <ul class="runs">
        {runs.map((r) => (
          <RunItem run={r} campaign={campaign.name} account={names.accounts.get(r.accountId)?.name} admin={me.admin} onChange={replace} />
        ))}
      </ul>
    </section>
  );
}

/** A button that asks before it acts: the question, then Yes or Keep it. */
function Confirmed({ label, question, yes, onYes }: { label: string; question: string; yes: string; onYes: () => Promise<unknown> }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span role="group" aria-label={`Confirm ${label.toLowerCase()}`} class="confirm">
      {question}{' '}
      <button type="button" class="danger" onClick={() => void onYes().finally(() => setAsking(false))}>
        {yes}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Keep it
      </button>
    </span>
  );
}

const VARS_SHOWN = 100;

/** Each chat's variables (personal messages) beside it, by name (stored JSON keeps no order); nothing for a campaign without any. */
function ChatVariables({ campaignId, targets }: { campaignId: string; targets: Campaign['targets'] }) {
  const withVars = targets.flatMap((t) => (typeof t !== 'string' && t.vars ? [{ ...t, vars: t.vars }] : []));
  // the titles the operator knows them by (the campaign's own chats list them, targets first)
  const [titles, setTitles] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    if (withVars.length === 0) return;
    api
      .campaignChats(campaignId, { limit: Math.min(targets.length, 500) })
      .then((page) => setTitles(new Map(page.items.flatMap((c) => (c.title ? [[`${c.chatId}|${c.threadId ?? ''}`, c.title] as const] : [])))))
      .catch(() => undefined);
  }, [campaignId, targets.length]);
  if (withVars.length === 0) return null;
  return (
    <div>
      <dt>Chat variables</dt>
      <dd>
        <ul class="chat-vars">
          {withVars.slice(0, VARS_SHOWN).map((t) => (
            <li>
              {titles.has(`${t.chatId}|${t.threadId ?? ''}`) && (
                <>
                  <strong>
                    <Outside>{titles.get(`${t.chatId}|${t.threadId ?? ''}`)}</Outside>
                  </strong>{' '}
                </>
              )}
              <code>
                <Outside>{t.chatId}</Outside>
              </code>
              {t.threadId && ` (topic ${t.threadId})`}:{' '}
              {Object.keys(t.vars).length === 0
                ? 'none'
                : Object.keys(t.vars)
                    .sort()
                    .map((name, i) => (
                      <>
                        {i > 0 && ' · '}
                        {name}=<Outside>{t.vars[name]}</Outside>
                      </>
                    ))}
            </li>
          ))}
        </ul>
        {withVars.length > VARS_SHOWN && <p class="muted">and {withVars.length - VARS_SHOWN} more chats with variables</p>}
      </dd>
    </div>
  );
}
