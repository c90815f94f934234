// Accounts: add one (any platform), its status, pace, group concurrency and limits, a countdown
// while the platform holds one back, its settings to edit, and the fix for a disconnected account
// (a new API key or bot token, or pairing WhatsApp again); a cooling account shows why, until
// when and its pace in force, and can be lifted; a proxy that failed says so, naming it.
import { useEffect, useState } from 'preact/hooks';
import { allPages, api, type Account, type AccountDefaults, type Me } from '../api.js';
import { ErrorNote, Pill } from '../components.js';
import { duration, time } from '../format.js';
import { useLive, useNow } from '../hooks.js';
import { Directory } from './account-directory.js';
import { Cooling, Fix } from './account-fix.js';
import { NewChats } from './new-chats.js';
import { AddAccount } from './account-form.js';
import { AccountSettings } from './account-settings.js';

export function Accounts({ me }: { me: Me }) {
  const [accounts, setAccounts] = useState<Account[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const now = useNow();
  const reload = async (current: () => boolean) => {
    try {
      const all = await allPages((cursor) => api.accounts({ limit: 500, cursor }));
      if (!current()) return;
      setAccounts(all);
      setError(null);
    } catch (e) {
      if (current()) setError(e);
    }
  };
  useLive(reload, (e) => 'accountId' in e, []);
  // what a new account of each platform gets: Add account starts there, Settings names the warm-up's steps
  const [defaults, setDefaults] = useState<AccountDefaults[] | null>(null);
  useEffect(() => {
    api.accountDefaults().then((d) => setDefaults(d.items), setError);
  }, []);
  const [editing, setEditing] = useState<string | null>(null);
  const replace = (a: Account) => setAccounts((list) => (list ?? []).map((x) => (x.id === a.id ? a : x)));
  const add = (a: Account) => setAccounts((list) => [a, ...(list ?? []).filter((x) => x.id !== a.id)]);
  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      <div class="actions page-actions">
        <AddAccount me={me} accounts={accounts ?? []} defaults={defaults} onCreated={add} />
      </div>
      <ErrorNote error={error} />
      {accounts?.length === 0 && <p>No accounts yet.</p>}
      <ul class="cards">
        {(accounts ?? []).map((a) => {
          const blocked = a.blockedUntil && new Date(a.blockedUntil).getTime() > now ? a.blockedUntil : null;
          return (
            <li class="card" data-account-id={a.id}>
              <h2>
                {a.name} <Pill status={a.status} />
              </h2>
              <p class="muted">
                {a.platform}
                {a.externalId ? ` · ${a.externalId}` : ''}
              </p>
              <dl class="facts">
                <div>
                  <dt>Pace</dt>
                  <dd>{pace(a)}</dd>
                </div>
                <div>
                  <dt>Group concurrency</dt>
                  <dd>{a.groupConcurrency}</dd>
                </div>
                <div>
                  <dt>Caps</dt>
                  <dd>{caps(a)}</dd>
                </div>
                <div>
                  <dt>Human gap</dt>
                  <dd>{a.sendDelaySeconds ? `${a.sendDelaySeconds.min}–${a.sendDelaySeconds.max} s` : '—'}</dd>
                </div>
                {a.proxy && (
                  <div>
                    <dt>Proxy</dt>
                    <dd>{`${a.proxy.scheme}://${a.proxy.host}:${a.proxy.port}${a.proxy.authenticated ? ' (with login)' : ''}`}</dd>
                  </div>
                )}
                <div>
                  <dt>Blocked until</dt>
                  <dd>{blocked ? `${time(blocked)} (${duration(new Date(blocked).getTime() - now)} left)` : '—'}</dd>
                </div>
              </dl>
              {a.proxy?.failure && (
                <p class="error" role="alert">
                  Proxy failed at {time(a.proxy.failure.at)}: {a.proxy.failure.message}. Nothing is sent until it connects; it is tried again at the next send,
                  or give the account a working proxy in Settings.
                </p>
              )}
              <Directory account={a} onSynced={replace} />
              {a.cooling && <Cooling account={a} onLifted={replace} />}
              <NewChats account={a} onLifted={replace} />
              {(a.status === 'disconnected' || a.status === 'pairing') && <Fix account={a} onFixed={replace} />}
              {editing === a.id ? (
                <AccountSettings account={a} defaults={defaults?.find((d) => d.platform === a.platform)} onSaved={replace} onClose={() => setEditing(null)} />
              ) : (
                <div class="actions">
                  <button type="button" aria-label={`Settings of ${a.name}`} onClick={() => setEditing(a.id)}>
                    Settings
                  </button>
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** The pace in force, and the configured one beside it while automatic cooling holds it lower. */
function pace(a: Account): string {
  const effective = a.effectiveMaxSendPerMinute;
  return effective < a.maxSendPerMinute ? `${effective}/min (lowered from ${a.maxSendPerMinute}/min, recovering)` : `${a.maxSendPerMinute}/min`;
}

/** Hourly and daily caps, and today's warm-up cap when a warm-up holds the account lower. */
function caps(a: Account): string {
  const parts = [
    a.hourlyCap !== null && `${a.hourlyCap}/hour`,
    a.dailyCap !== null && `${a.dailyCap}/day`,
    a.warmup?.capToday != null && `warm-up ${a.warmup.capToday} today`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : '—';
}
