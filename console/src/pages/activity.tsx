// Activity: every run, newest first, live, with what holds it and the commands its state allows.
import { useEffect, useState } from 'preact/hooks';
import { allPages, api, type Me, type Run, type RunStatus, type Tenant } from '../api.js';
import { ErrorNote, Explanation, Pill, Progress, RunActions, TimingFacts } from '../components.js';
import { time } from '../format.js';
import { useLive, useNames } from '../hooks.js';
import { href } from '../router.js';

const STATUSES: RunStatus[] = ['queued', 'running', 'paused', 'success', 'partial', 'failed', 'cancelled'];

export function Activity({ me }: { me: Me }) {
  const names = useNames();
  const [status, setStatus] = useState<RunStatus | ''>('');
  const [campaignId, setCampaignId] = useState('');
  const [accountId, setAccountId] = useState('');
  const [tenantId, setTenantId] = useState('');
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const tenants = useTenants(me.admin);
  const filters = { status, campaignId: campaignId || undefined, accountId: accountId || undefined, tenantId: tenantId || undefined };

  // Reloads the pages already shown, so live updates never shorten a list the operator extended.
  const reload = async (current: () => boolean) => {
    try {
      const page = await api.runs({ ...filters, limit: Math.max(50, runs?.length ?? 0) });
      if (!current()) return;
      setRuns(page.items);
      setCursor(page.nextCursor);
      setError(null);
    } catch (e) {
      if (current()) setError(e);
    }
  };
  useLive(reload, (e) => !('synced' in e), [status, campaignId, accountId, tenantId]);
  const more = async () => {
    if (!cursor || !runs) return;
    const shown = runs;
    const page = await api.runs({ ...filters, limit: 50, cursor });
    // the list changed meanwhile (a reload, another filter): this page belongs to none of it
    setRuns((list) => (list === shown ? [...shown, ...page.items] : list));
    setCursor((c) => (c === cursor ? page.nextCursor : c));
  };
  const replace = (r: Run) => setRuns((list) => (list ?? []).map((x) => (x.id === r.id ? r : x)));

  // Every filter is the API's (status, campaign, account and, for the admin, tenant).
  const shown = runs ?? [];
  // the admin's campaign and account pickers offer the chosen tenant's only
  const ofTenant = <T extends { tenantId: string }>(list: Iterable<T>) => [...list].filter((x) => !tenantId || x.tenantId === tenantId);
  return (
    <section aria-labelledby="activity-title">
      <h1 id="activity-title">Activity</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as RunStatus | '')}>
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Campaign
          <select value={campaignId} onChange={(e) => setCampaignId(e.currentTarget.value)}>
            <option value="">All</option>
            {ofTenant(names.campaigns.values()).map((c) => (
              <option value={c.id}>{c.name}</option>
            ))}
          </select>
        </label>
        <label>
          Account
          <select value={accountId} onChange={(e) => setAccountId(e.currentTarget.value)}>
            <option value="">All</option>
            {ofTenant(names.accounts.values()).map((a) => (
              <option value={a.id}>{a.name}</option>
            ))}
          </select>
        </label>
        {me.admin && (
          <label>
            Tenant
            <select value={tenantId} onChange={(e) => setTenantId(e.currentTarget.value)}>
              <option value="">All</option>
              {tenants.map((t) => (
                <option value={t.id}>{t.name}</option>
              ))}
            </select>
          </label>
        )}
      </form>
      <ErrorNote error={error} />
      {runs === null ? <p>Loading…</p> : shown.length === 0 ? <p>No runs yet.</p> : null}
      <ul class="runs">
        {shown.map((r) => (
          <RunItem
            run={r}
            campaign={names.campaigns.get(r.campaignId)?.name}
            account={names.accounts.get(r.accountId)?.name}
            admin={me.admin}
            onChange={replace}
          />
        ))}
      </ul>
      {cursor && (
        <button type="button" onClick={() => void more()}>
          Load older runs
        </button>
      )}
    </section>
  );
}

const TRIGGERS: Record<Run['trigger'], string> = { manual: 'run now', schedule: 'scheduled', test: 'test send' };

export function RunItem({
  run,
  campaign,
  account,
  admin,
  onChange,
}: {
  run: Run;
  campaign?: string | undefined;
  account?: string | undefined;
  admin: boolean;
  onChange: (r: Run) => void;
}) {
  return (
    <li class={`run run-${run.status}`} data-run-id={run.id}>
      <div class="run-head">
        <Pill status={run.status} />
        <a href={href.run(run.id)} class="run-name">
          {campaign ?? `Run ${run.id.slice(0, 8)}`}
        </a>
        <span class="muted">
          {account ? `${account} · ` : ''}
          {TRIGGERS[run.trigger]} {time(run.scheduledAt)}
          {admin ? ` · tenant ${run.tenantId.slice(0, 8)}` : ''}
        </span>
      </div>
      <Progress run={run} />
      <dl class="facts">
        <TimingFacts run={run} />
      </dl>
      <Explanation run={run} />
      <RunActions run={run} onChange={onChange} />
    </li>
  );
}

/** Every tenant, for the admin's tenant picker; none for a tenant token. */
function useTenants(admin: boolean): Tenant[] {
  const [tenants, setTenants] = useState<Tenant[]>([]);
  useEffect(() => {
    if (admin) allPages((cursor) => api.tenants({ limit: 500, cursor })).then(setTenants, () => undefined);
  }, [admin]);
  return tenants;
}
