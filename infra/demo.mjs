// The demo `npm start` shows: one tenant, two sandbox accounts, an image and two campaigns.
// Its ids and token are kept in `<data>/demo.json` (mode 0600), so a second `npm start` on the
// same `.data/` reuses the tenant, accounts and image instead of piling up new ones, and
// retires the previous run's campaigns before the scheduler starts, so none of them fires late.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { demoImage } from './demo-image.mjs';

/** A JSON client for the control API that throws `METHOD url → status body` on any non-2xx. */
export function apiClient(apiUrl) {
  return async (method, url, token, body, contentType = 'application/json') => {
    const headers = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = contentType;
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const res = await fetch(`${apiUrl}${url}`, { method, headers, body: payload });
    const json = res.status === 204 ? null : await res.json().catch(() => null);
    if (!res.ok) {
      const error = new Error(`${method} ${url} → ${res.status} ${JSON.stringify(json)}`);
      error.status = res.status;
      throw error;
    }
    return json;
  };
}

const readState = (file) => {
  try {
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  } catch {
    return {}; // a damaged file: start a new demo rather than fail
  }
};
const saveState = (file, state) => writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });

/** The value of `lookup()`, or null when the API answers 401/404 (it no longer exists here). */
async function stillThere(lookup) {
  try {
    return await lookup();
  } catch (error) {
    if (error.status === 401 || error.status === 403 || error.status === 404) return null;
    throw error;
  }
}

/**
 * Step 1, before the scheduler and senders start: the tenant (reused when its token still works
 * against this database), and the previous demo's campaigns deleted, which cancels their open runs.
 */
export async function retirePreviousDemo({ apiUrl, adminToken, dataDir, say }) {
  const call = apiClient(apiUrl);
  const file = path.join(dataDir, 'demo.json');
  const state = readState(file);
  // The admin token can delete any tenant's campaign, so even a demo whose tenant is gone is retired.
  let retired = 0;
  for (const id of state.campaignIds ?? []) {
    if (await stillThere(() => call('DELETE', `/v1/campaigns/${id}`, adminToken).then(() => true))) retired += 1;
  }
  const cancelled = retired ? `; its ${retired} previous campaigns are retired and their open runs cancelled` : '';
  const me = state.token ? await stillThere(() => call('GET', '/v1/me', state.token)) : null;
  if (me && me.tenantId === state.tenantId) {
    saveState(file, { ...state, campaignIds: [] });
    say(`✓ reusing the demo tenant "${state.tenantName}"${cancelled}`);
    return { ...state, campaignIds: [] };
  }
  const tenant = await call('POST', '/v1/tenants', adminToken, { name: 'Demo' });
  const fresh = { tenantId: tenant.id, tenantName: tenant.name, token: tenant.token, campaignIds: [] };
  saveState(file, fresh);
  say(`✓ demo tenant "${tenant.name}" created (its token is kept in ${path.relative(process.cwd(), file) || file})${cancelled}`);
  return fresh;
}

/** Step 2: the accounts and image (reused when they still exist), and two new campaigns. */
export async function startDemoCampaigns({ apiUrl, dataDir, state, say }) {
  const call = apiClient(apiUrl);
  const file = path.join(dataDir, 'demo.json');
  const token = state.token;
  const account = async (key, name, maxSendPerMinute) => {
    const id = state.accountIds?.[key];
    if (id && (await stillThere(() => call('GET', `/v1/accounts/${id}`, token)))) return id;
    // Each http account has its own API key; the sandbox registers it with the account's first request.
    const body = {
      platform: 'http',
      name,
      externalId: `demo-${key}-${randomBytes(3).toString('hex')}`,
      credentials: { apiKey: randomBytes(24).toString('base64url') },
      maxSendPerMinute,
    };
    return (await call('POST', '/v1/accounts', token, body)).id;
  };
  const accountIds = { a: await account('a', 'Demo account A', 120), b: await account('b', 'Demo account B', 60) };
  let mediaId = state.mediaId;
  if (!mediaId || !(await stillThere(() => call('GET', `/v1/media/${mediaId}`, token)))) {
    mediaId = (await call('POST', '/v1/media?filename=metronome.png', token, demoImage(), 'image/png')).id;
  }
  const chats = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(2, '0')}`);
  const messages = [
    { type: 'text', text: 'Good morning! This is your Metronome demo reminder.' },
    { type: 'media', mediaId, caption: 'Sent by Metronome' },
  ];
  const c1 = await call('POST', '/v1/campaigns', token, {
    accountId: accountIds.a,
    name: 'Demo: every minute to 50 chats',
    timezone: 'UTC',
    schedule: { type: 'interval', everySeconds: 60 },
    messages,
    targets: chats('group', 50),
  });
  const c2 = await call('POST', '/v1/campaigns', token, {
    accountId: accountIds.b,
    name: 'Demo: every 2 minutes to 10 chats',
    timezone: 'UTC',
    schedule: { type: 'interval', everySeconds: 120 },
    messages: messages.slice(0, 1),
    targets: chats('team', 10),
  });
  saveState(file, { ...state, accountIds, mediaId, campaignIds: [c1.id, c2.id] });
  say('✓ demo accounts A (120/min) and B (60/min); campaigns to 50 and 10 sandbox chats, due now');
  return {
    token,
    campaigns: new Map([
      [c1.id, c1.name],
      [c2.id, c2.name],
    ]),
  };
}
