// What one API request costs, by route, with the API alone (no senders, no scheduler, its logs
// read by this process as a test's or the benchmark's would be): `/healthz` (no auth, no
// database), `GET /v1/me` (auth: rate limits in Redis, the token in PostgreSQL),
// `GET /v1/accounts/{id}` (auth and one row) and the directory search of the
// `directory-search` scenario over 10,000 entries written straight into the table. Each at RATE
// requests a second over 10 connections for S seconds, in turn, ROUNDS times: autocannon's
// `overallRate`, then evenly spaced (paced-load.mjs), side by side.
// PROFILE=dir writes the API's CPU profile there (node --cpu-prof).
//
//   node bench/micro/api-request.mjs [RATE=50] [S=10] [ROUNDS=2]
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { pacedLoad } from '../scenarios/paced-load.mjs';
import pg from 'pg';
import { apiCall, createScratchDatabase } from '@metronome/testkit';

const RATE = Number(process.argv[2] ?? 50);
const S = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 2);
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

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome';
const db = await createScratchDatabase(databaseUrl, 'api_request');
const adminToken = `admin-${randomBytes(16).toString('hex')}`;
const execArgv = process.env.PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE}`] : [];
const api = spawn(process.execPath, [...execArgv, 'services/control-api/dist/server.js'], {
  env: {
    ...process.env,
    NODE_ENV: 'development',
    DATABASE_URL: db.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    KEY_PREFIX: `apireq-${randomBytes(4).toString('hex')}`,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve) => {
  let buffered = '';
  api.stdout.on('data', (chunk) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop();
    for (const line of lines) {
      const parsed = JSON.parse(line);
      if (parsed.msg === 'control-api listening') resolve(parsed.url);
    }
  });
});
try {
  const tenant = (await apiCall(url, 'POST', '/v1/tenants', adminToken, { name: 'bench' })).body;
  const account = (
    await apiCall(url, 'POST', '/v1/accounts', tenant.token, { platform: 'http', credentials: { apiKey: 'sandbox-api-key-0001' }, name: 'a', externalId: 'a' })
  ).body;
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(
    `insert into chat_directory (account_id, chat_id, title, title_folded, kind, member_count, can_send, last_sync_at, updated_at)
     select $1, 'chat-' || g, t.title, lower(unaccent_free(t.title)) || chr(31) || 'chat-' || g, case when g % 7 = 0 then 'direct' else 'group' end, 2 + g % 500, true, now(), now()
     from generate_series(1, 10000) g, lateral (select ($2::text[])[1 + (g - 1) % 16] || ' ' || ($3::text[])[1 + ((g - 1) / 16) % 16] || ' ' || ((g - 1) / 256 + 1) as title) t`.replace(
      'lower(unaccent_free(t.title))',
      'lower(translate(t.title, $4, $5))',
    ),
    [account.id, PLACES, GROUPS, 'éèàüöóåâ', 'eeauooaa'],
  );
  await client.query('vacuum analyze chat_directory');
  await client.end();
  let next = 0;
  const routes = {
    healthz: () => '/healthz',
    me: () => '/v1/me',
    account: () => `/v1/accounts/${account.id}`,
    search: () => `/v1/accounts/${account.id}/chats?limit=50&query=${encodeURIComponent(QUERIES[next++ % QUERIES.length])}`,
  };
  const load = (path) =>
    new Promise((resolve, reject) =>
      autocannon(
        {
          url,
          connections: 10,
          overallRate: RATE,
          duration: S,
          headers: { authorization: `Bearer ${tenant.token}` },
          requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: path() }) }],
        },
        (err, r) => (err ? reject(err) : resolve(r)),
      ),
    );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, path] of Object.entries(routes)) {
      const r = await load(path);
      console.log(
        `round ${round} ${name.padEnd(8)} autocannon p50 ${r.latency.p50} ms  p90 ${r.latency.p90} ms  p99 ${r.latency.p99} ms  max ${r.latency.max} ms  non2xx ${r.non2xx}  load1 ${loadavg()[0].toFixed(2)}`,
      );
      const p = await pacedLoad({ baseUrl: url, path, rate: RATE, seconds: S, headers: { authorization: `Bearer ${tenant.token}` } });
      console.log(
        `round ${round} ${name.padEnd(8)} paced      p50 ${p.p50} ms  p90 ${p.p90} ms  p99 ${p.p99} ms  max ${p.max} ms  statuses ${JSON.stringify(p.statuses)}  load1 ${loadavg()[0].toFixed(2)}`,
      );
    }
  }
} finally {
  api.kill('SIGTERM');
  await new Promise((resolve) => api.once('exit', resolve));
  await db.drop();
}
