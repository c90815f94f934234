import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import { apiCall, createScratchDatabase, freePort, startService } from '@metronome/testkit';

// Control API under load (autocannon): GET /v1/runs/{id} and POST /v1/runs/{id}/resume at
// 1, 10, 50 and 100 connections, one API process on a scratch database, no scheduler or sender
// (nothing consumes the queue, so resumed runs stay queued and each resume is a real
// paused → queued transition plus a BullMQ enqueue). Paused runs are written straight into
// PostgreSQL, one per campaign (a campaign has at most one queued run), 5 targets each. Every
// resume request takes the next paused run; once they run out, resumes answer 409 (reported
// separately, never mixed into the 202 figures); a last round resumes already-resumed runs
// on purpose, to price the 409 path. LOG_LEVEL=warn: per-request info lines to a
// pipe would measure the log consumer, not the API.
export async function apiLoad(env) {
  const levels = [1, 10, 50, 100];
  const seconds = env.quick ? 2 : 8;
  const pausedRuns = env.quick ? 4_000 : 40_000;
  const db = await createScratchDatabase(env.databaseUrl, 'bench_api');
  const port = await freePort();
  const adminToken = randomBytes(16).toString('hex');
  const api = startService('api', 'services/control-api/dist/server.js', {
    DATABASE_URL: db.url,
    REDIS_URL: env.redisUrl,
    KEY_PREFIX: `bench-api-${randomBytes(4).toString('hex')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  });
  const client = new pg.Client({ connectionString: db.url });
  try {
    const url = `http://127.0.0.1:${port}`;
    // At LOG_LEVEL=warn the "listening" line is not printed: ask /healthz until it answers.
    for (let i = 0; ; i++) {
      const up = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (i > 200 || api.child.exitCode !== null) throw new Error(`the API did not start:\n${api.output.slice(-20).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const ok = async (method, path, token, body) => {
      const res = await apiCall(url, method, path, token, body);
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const tenant = await ok('POST', '/v1/tenants', adminToken, { name: 'bench' });
    const account = await ok('POST', '/v1/accounts', tenant.token, {
      platform: 'http',
      credentials: { apiKey: 'sandbox-api-key-0001' },
      name: 'a',
      externalId: 'a',
    });
    const campaign = await ok('POST', '/v1/campaigns', tenant.token, {
      accountId: account.id,
      name: 'load',
      timezone: 'UTC',
      schedule: { type: 'once', at: '2100-01-01T00:00:00Z' },
      messages: [{ type: 'text', text: 'hi' }],
      targets: ['c1', 'c2', 'c3', 'c4', 'c5'],
      active: false,
    });
    await client.connect();
    const { rows } = await client.query(
      `with c as (
         insert into campaigns (tenant_id, account_id, name, timezone, schedule, messages, targets, active)
         select tenant_id, account_id, name || '-' || g, timezone, schedule, messages, targets, false
         from campaigns, generate_series(1, $2) g where id = $1
         returning id, tenant_id, account_id, messages
       ), r as (
         insert into runs (campaign_id, tenant_id, account_id, trigger, status, parts, total, scheduled_at, started_at, first_send_at,
                           window_end_at, paused_reason, error_summary, job_id, job_seq)
         select id, tenant_id, account_id, 'schedule', 'paused', messages, 5, now() - interval '1 hour', now() - interval '50 minutes',
                now() - interval '50 minutes', now() - interval '1 minute', 'operator', null, null, 0
         from c
         returning id
       ), t as (
         insert into run_targets (run_id, chat_id, status, sent_at)
         select r.id, 'c' || k, case when k <= 2 then 'sent' else 'pending' end, case when k <= 2 then now() - interval '45 minutes' end
         from r, generate_series(1, 5) k
       )
       select id from r`,
      [campaign.id, pausedRuns],
    );
    const ids = rows.map((r) => r.id);
    // Statistics for the rows just written, as autovacuum would have them in a running
    // deployment; without them the planner may scan run_targets whole for each run's counts.
    await client.query('analyze campaigns, runs, run_targets');
    const headers = { authorization: `Bearer ${tenant.token}` };
    const figures = {};
    const params = { levels, secondsPerLevel: seconds, pausedRuns, targetsPerRun: 5, logLevel: 'warn', cpus: (await import('node:os')).cpus().length };

    // GET status: every request a different run (rotating over all of them).
    for (const connections of levels) {
      let next = 0;
      const result = await run({
        url,
        connections,
        duration: seconds,
        headers,
        requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/v1/runs/${ids[next++ % ids.length]}` }) }],
      });
      figures[`GET run c=${connections} req/s`] = result.requests.average;
      figures[`GET run c=${connections} p99 ms`] = result.latency.p99;
      figures[`GET run c=${connections} non-2xx`] = result.non2xx;
    }

    // POST resume: each request takes the next paused run, never one used before.
    let next = 0;
    for (const connections of levels) {
      const counts = {};
      const result = await run({
        url,
        connections,
        duration: seconds,
        headers: { ...headers, 'content-type': 'application/json' },
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => ({ ...req, path: `/v1/runs/${ids[next++ % ids.length]}/resume` }),
            onResponse: (status) => {
              counts[status] = (counts[status] ?? 0) + 1;
            },
          },
        ],
      });
      figures[`resume c=${connections} req/s`] = result.requests.average;
      figures[`resume c=${connections} p99 ms`] = result.latency.p99;
      figures[`resume c=${connections} 202`] = counts[202] ?? 0;
      figures[`resume c=${connections} 409`] = counts[409] ?? 0;
      figures[`resume c=${connections} other`] = Object.entries(counts)
        .filter(([s]) => s !== '202' && s !== '409')
        .reduce((a, [, n]) => a + n, 0);
    }
    // Resuming runs already resumed: the conflict path (one conditional UPDATE that matches
    // nothing, then the lookup that tells 409 from 404), at 50 connections.
    {
      let again = 0;
      const counts = {};
      const result = await run({
        url,
        connections: 50,
        duration: seconds,
        headers: { ...headers, 'content-type': 'application/json' },
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => ({ ...req, path: `/v1/runs/${ids[again++ % Math.max(1, Math.min(next, ids.length))]}/resume` }),
            onResponse: (status) => {
              counts[status] = (counts[status] ?? 0) + 1;
            },
          },
        ],
      });
      figures['resume again c=50 req/s'] = result.requests.average;
      figures['resume again c=50 p99 ms'] = result.latency.p99;
      figures['resume again c=50 409'] = counts[409] ?? 0;
      // 202s here are runs whose first resume request was prepared but cut off by the end of its round
      figures['resume again c=50 202'] = counts[202] ?? 0;
      figures['resume again c=50 other'] = Object.entries(counts)
        .filter(([s]) => s !== '409' && s !== '202')
        .reduce((a, [, n]) => a + n, 0);
    }
    const queued = await client.query(`select count(*)::int as n from runs where status = 'queued'`);
    figures['runs resumed (db)'] = queued.rows[0].n;
    return { params, figures };
  } finally {
    await client.end().catch(() => undefined);
    await api.stop();
    await db.drop();
  }
}

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
  });
}
