// Routes live in the URL fragment (#/runs/<id>): the server serves one page for every view and
// never sees which one is open. `#token=…` is not a route: main.tsx takes it in once.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'activity' }
  | { page: 'run'; id: string }
  | { page: 'campaigns' }
  | { page: 'campaign'; id: string }
  | { page: 'campaign-new' }
  | { page: 'campaign-edit'; id: string }
  | { page: 'accounts' }
  | { page: 'audiences' }
  | { page: 'audience'; id: string };

export function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'runs' && parts[1]) return { page: 'run', id: parts[1] };
  if (parts[0] === 'campaigns' && parts[1] === 'new') return { page: 'campaign-new' };
  if (parts[0] === 'campaigns' && parts[1] && parts[2] === 'edit') return { page: 'campaign-edit', id: parts[1] };
  if (parts[0] === 'campaigns' && parts[1]) return { page: 'campaign', id: parts[1] };
  if (parts[0] === 'campaigns') return { page: 'campaigns' };
  if (parts[0] === 'accounts') return { page: 'accounts' };
  if (parts[0] === 'audiences' && parts[1]) return { page: 'audience', id: parts[1] };
  if (parts[0] === 'audiences') return { page: 'audiences' };
  return { page: 'activity' };
}

export const href = {
  activity: () => '#/',
  run: (id: string) => `#/runs/${encodeURIComponent(id)}`,
  campaigns: () => '#/campaigns',
  campaign: (id: string) => `#/campaigns/${encodeURIComponent(id)}`,
  newCampaign: () => '#/campaigns/new',
  editCampaign: (id: string) => `#/campaigns/${encodeURIComponent(id)}/edit`,
  accounts: () => '#/accounts',
  audiences: () => '#/audiences',
  audience: (id: string) => `#/audiences/${encodeURIComponent(id)}`,
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parse(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
