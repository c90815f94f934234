import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { eventually } from '@metronome/testkit';
import { call, withStack } from './common.mjs';
import { pacedLoad } from './paced-load.mjs';

// Chat directory search (CONTRACT §3, "Chat directory"): an http account whose platform lists
// 10,000 chats (set at the sandbox, then synced by a sender through the protocol's listing, as
// any account's would be), searched with `GET /v1/accounts/{id}/chats?query=` at 50 requests a
// second for 20 s, queries varied (words, parts of words, accents, chat ids, no match, one
// letter). Goal: p99 ≤ 50 ms. The rate is kept evenly (paced-load.mjs: one request every 20 ms,
// over up to 10 connections); autocannon's `overallRate`, which sends the second's 50 as bursts
// of 10 at a time, is reported beside it. The sync's own time is reported too, and, measured just
// before at the same rate, `GET /v1/accounts/{id}`: what any small request costs on the machine
// then (the load of other work moves both).

const PLACES = [
  'Riverside',
  'Northside',
  'Harbour',
  'Old Town',
  'Lakeview',
  'Hillcrest',
  'Café Lumière',
  'São Paulo',
  'Zürich',
  'Greenway',
  'Maple Street',
  'Westend',
  'Kraków',
  'Åre',
  'Dún Laoghaire',
  'Montréal',
];
const GROUPS = [
  'Book Club',
  'Running Crew',
  'Parents',
  'Choir',
  'Chess Club',
  'Neighbours',
  'Volunteers',
  'Market Stalls',
  'Football',
  'Garden Share',
  'Photo Walks',
  'Regulars',
  'Alumni',
  'Cyclists',
  'Quiz Night',
  'Orchestra',
];
const QUERIES = [
  'river',
  'book club',
  'CAFE',
  'lumiere',
  'sao paulo',
  'zur',
  'krakow',
  'are ',
  'dun',
  'montreal',
  'choir',
  'chess',
  'neighbo',
  'photo walks 12',
  'quiz',
  'alumni 7',
  'a',
  'e',
  'xyzzy',
  'chat-1234',
  'chat-99',
  'street',
  'crew',
  '42',
  'garden share 3',
  'orchestra',
  'old town',
  'hill',
  'green',
  'westend foot',
];

export async function directorySearch(env) {
  const size = env.quick ? 2_000 : 10_000;
  const seconds = env.quick ? 5 : 20;
  const rate = 50;
  return withStack(env, { senders: 1 }, async ({ stack, token, db }) => {
    const chats = Array.from({ length: size }, (_, i) => ({
      chatId: `chat-${i + 1}`,
      title: `${PLACES[i % PLACES.length]} ${GROUPS[Math.floor(i / PLACES.length) % GROUPS.length]} ${Math.floor(i / (PLACES.length * GROUPS.length)) + 1}`,
      kind: i % 7 === 0 ? 'direct' : 'group',
      memberCount: 2 + (i % 500),
      canSend: i % 50 !== 0,
    }));
    const put = await fetch(`${stack.sandboxUrl}/sandbox/accounts/dir-bench/directory`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chats }),
    });
    if (!put.ok) throw new Error(`sandbox directory PUT → ${put.status}`);
    const syncStarted = Date.now();
    const account = await call(stack, 'POST', '/v1/accounts', token, {
      platform: 'http',
      credentials: { apiKey: 'sandbox-api-key-0001' },
      name: 'directory',
      externalId: 'dir-bench',
    });
    const synced = await eventually(
      'the sync to end',
      async () => {
        const a = await call(stack, 'GET', `/v1/accounts/${account.id}`, token);
        if (a.directory.status === 'failed') throw new Error(`sync failed: ${a.directory.reason}`);
        return a.directory.status === 'ok' ? a.directory : null;
      },
      120_000,
      100,
    );
    const syncSeconds = (Date.now() - syncStarted) / 1000;
    if (synced.size !== size) throw new Error(`synced ${synced.size} of ${size}`);

    // Statistics and the visibility map for the rows just written, as autovacuum would have them
    // in a running deployment (the shared benchmark server runs without it).
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query('vacuum analyze chat_directory').finally(() => client.end());

    /** `path()` at `rate` requests a second for `seconds`: autocannon's result and the answers by status. */
    const load = async (path) => {
      const counts = {};
      const result = await new Promise((resolve, reject) =>
        autocannon(
          {
            url: stack.apiUrl,
            connections: 10,
            overallRate: rate,
            duration: seconds,
            headers: { authorization: `Bearer ${token}` },
            requests: [
              { method: 'GET', setupRequest: (req) => ({ ...req, path: path() }), onResponse: (status) => void (counts[status] = (counts[status] ?? 0) + 1) },
            ],
          },
          (err, r) => (err ? reject(err) : resolve(r)),
        ),
      );
      return { result, counts };
    };
    const load1Before = loadavg()[0];
    const paced = (path) => pacedLoad({ baseUrl: stack.apiUrl, path, rate, seconds, headers: { authorization: `Bearer ${token}` } });
    const searchPath = () => `/v1/accounts/${account.id}/chats?limit=50&query=${encodeURIComponent(QUERIES[next++ % QUERIES.length])}`;
    let next = 0;
    // The same rate on the account itself (one small read): what any request costs on this machine now.
    const baseline = await paced(() => `/v1/accounts/${account.id}`);
    const search = await paced(searchPath);
    // the API's own view of the same requests: its histogram of request durations
    const served = await serverSide(stack.apiUrl, '/v1/accounts/:id/chats');
    const { result, counts } = await load(searchPath);
    const after = loadavg();
    return {
      params: { chats: size, seconds, rate, connections: 10, queries: QUERIES.length, limit: 50, senders: 1 },
      figures: {
        'sync s': syncSeconds,
        'search req/s': Math.round(search.rate * 10) / 10,
        'search p50 ms': search.p50,
        'search p90 ms': search.p90,
        'search p99 ms': search.p99,
        'search max ms': search.max,
        'search 200': search.statuses[200] ?? 0,
        'search non-2xx': search.requests - (search.statuses[200] ?? 0),
        'GET account p50 ms': baseline.p50,
        'GET account p99 ms': baseline.p99,
        'search served within 25 ms (API histogram)': served.within25,
        'search served within 50 ms (API histogram)': served.within50,
        'search in bursts (autocannon) p50 ms': result.latency.p50,
        'search in bursts (autocannon) p99 ms': result.latency.p99,
        'search in bursts (autocannon) 200': counts[200] ?? 0,
        'load1 before': load1Before,
        'load1 after': after[0],
        'load5 after': after[1],
      },
    };
  });
}

/** How many of `route`'s GETs the API served within 25 and 50 ms, from its own histogram. */
async function serverSide(apiUrl, route) {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  const count = (le) =>
    text
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('metronome_http_request_duration_seconds_bucket{') &&
          l.includes(`route="${route}"`) &&
          l.includes('method="GET"') &&
          l.includes(`le="${le}"`),
      )
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  const all = count('+Inf');
  return { within25: `${count('0.025')}/${all}`, within50: `${count('0.05')}/${all}` };
}
