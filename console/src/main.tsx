// The operator console: sign in with a tenant or admin token, then Activity, runs, campaigns,
// accounts and audiences, all through the /v1 API.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, session, whenUnauthorized, type Me } from './api.js';
import * as events from './events.js';
import { NotificationSwitch, Toasts } from './notify.js';
import { Accounts } from './pages/accounts.js';
import { Activity } from './pages/activity.js';
import { AudiencePage } from './pages/audience.js';
import { Audiences } from './pages/audiences.js';
import { CampaignFormPage } from './pages/campaign-form.js';
import { CampaignPage, Campaigns } from './pages/campaigns.js';
import { RunPage } from './pages/run.js';
import { href, useRoute } from './router.js';

// `npm start` prints the console URL as `/#token=…`: a URL fragment is never sent to the
// server, so the token reaches no request line and no log. Read it once into sessionStorage
// and take it out of the address bar (and the history) before anything renders.
function takeTokenFromFragment(): void {
  const match = /^#token=([^&]+)/.exec(location.hash);
  if (!match?.[1]) return;
  session.set(decodeURIComponent(match[1]));
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
}

function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const me = await api.me(token.trim());
      session.set(token.trim());
      onSignedIn(me);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That token was not accepted.' : err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <main class="signin">
      <h1>Metronome</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label for="token">Tenant or admin token</label>
        <input id="token" type="password" autoComplete="off" value={token} required onInput={(e) => setToken(e.currentTarget.value)} />
        <button type="submit" class="primary">
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <p class="muted">The token is kept in this tab only (session storage) and sent as a bearer token.</p>
      </form>
    </main>
  );
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(session.token() !== null);
  const [live, setLive] = useState(false);
  const route = useRoute();

  const signOut = () => {
    session.clear();
    events.stop();
    setMe(null);
  };
  useEffect(() => {
    whenUnauthorized(signOut);
    if (session.token() === null) return;
    api
      .me()
      .then(setMe, () => session.clear())
      .finally(() => setChecking(false));
  }, []);
  useEffect(() => {
    if (!me) return;
    events.start();
    return events.listen({ state: setLive });
  }, [me]);

  if (checking) return <p>Loading…</p>;
  if (!me) return <SignIn onSignedIn={setMe} />;
  const nav = (to: string, text: string, current: boolean) => (
    <a href={to} aria-current={current ? 'page' : undefined}>
      {text}
    </a>
  );
  return (
    <>
      <header class="top">
        <strong class="brand">Metronome</strong>
        <nav aria-label="Main">
          {nav(href.activity(), 'Activity', route.page === 'activity' || route.page === 'run')}
          {nav(href.campaigns(), 'Campaigns', route.page.startsWith('campaign'))}
          {nav(href.accounts(), 'Accounts', route.page === 'accounts')}
          {nav(href.audiences(), 'Audiences', route.page.startsWith('audience'))}
        </nav>
        <span class="who">
          <span class={live ? 'live on' : 'live'}>{live ? 'Live' : 'Reconnecting…'}</span>{' '}
          {me.admin ? 'Admin (every tenant)' : `Tenant ${me.tenantId?.slice(0, 8) ?? ''}`} <NotificationSwitch />{' '}
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main>
        {route.page === 'activity' && <Activity me={me} />}
        {route.page === 'run' && <RunPage id={route.id} key={route.id} />}
        {route.page === 'campaigns' && <Campaigns />}
        {route.page === 'campaign' && <CampaignPage id={route.id} me={me} key={route.id} />}
        {route.page === 'campaign-new' && <CampaignFormPage me={me} key="new" />}
        {route.page === 'campaign-edit' && <CampaignFormPage id={route.id} me={me} key={`edit-${route.id}`} />}
        {route.page === 'accounts' && <Accounts me={me} />}
        {route.page === 'audiences' && <Audiences me={me} />}
        {route.page === 'audience' && <AudiencePage id={route.id} key={route.id} />}
      </main>
      <Toasts />
    </>
  );
}

takeTokenFromFragment();
render(<App />, document.getElementById('app')!);
