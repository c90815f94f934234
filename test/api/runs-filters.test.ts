import { CompiledQuery, sql } from 'kysely';
import { RunControlRepository, RunWaitingRepository, type RunFilter } from '@metronome/db';
import { ADMIN_TOKEN, call, createAccount, campaignBody, createTenant, seedRun, startApi, type Api, type Tenant } from './harness.js';

// GET /v1/runs filtered by account and by tenant, in combination with status, campaignId and
// the cursor; and the plan PostgreSQL makes of each filter's one statement.

let api: Api;
let a: Tenant;
let b: Tenant;
let accountA1: string;
let accountA2: string;
let campaignA1: string;
let campaignA1b: string;
let campaignA2: string;
let campaignB: string;
const base = Date.parse('2030-01-10T00:00:00Z');

async function campaignOn(tenant: Tenant, accountId: string): Promise<string> {
  const res = await call(api, 'POST', '/v1/campaigns', tenant.token, campaignBody(accountId));
  expect(res.status).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  api = await startApi('api_runs_filters');
  a = await createTenant(api, 'A');
  b = await createTenant(api, 'B');
  accountA1 = await createAccount(api, a);
  accountA2 = await createAccount(api, a);
  campaignA1 = await campaignOn(a, accountA1);
  campaignA1b = await campaignOn(a, accountA1);
  campaignA2 = await campaignOn(a, accountA2);
  campaignB = await campaignOn(b, await createAccount(api, b));
}, 30_000);
afterAll(async () => api.close());

const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((r) => r.id);

/** Every page of a list, one run a page, following nextCursor. */
async function allPages(url: string, token: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await call(api, 'GET', `${url}&limit=1${cursor ? `&cursor=${cursor}` : ''}`, token);
    expect(res.status).toBe(200);
    seen.push(...ids(res));
    cursor = res.body.nextCursor;
  } while (cursor);
  return seen;
}

describe('GET /v1/runs?accountId=', () => {
  test("the account's runs across its campaigns, newest first, with status, campaignId and the cursor", async () => {
    const r1 = await seedRun(api, campaignA1, 'success', { x: 'sent' }, { createdAt: new Date(base) });
    const r2 = await seedRun(api, campaignA1b, 'failed', { x: 'failed' }, { createdAt: new Date(base + 1000) });
    const r3 = await seedRun(api, campaignA1, 'success', { x: 'sent' }, { createdAt: new Date(base + 2000) });
    const other = await seedRun(api, campaignA2, 'success', { x: 'sent' }, { createdAt: new Date(base + 3000) });

    expect(ids(await call(api, 'GET', `/v1/runs?accountId=${accountA1}`, a.token))).toEqual([r3.id, r2.id, r1.id]);
    expect(await allPages(`/v1/runs?accountId=${accountA1}`, a.token)).toEqual([r3.id, r2.id, r1.id]);
    expect(await allPages(`/v1/runs?accountId=${accountA1}&status=success`, a.token)).toEqual([r3.id, r1.id]);
    expect(ids(await call(api, 'GET', `/v1/runs?accountId=${accountA1}&campaignId=${campaignA1b}`, a.token))).toEqual([r2.id]);
    // a campaign of another account: both filters apply, nothing matches both
    expect(ids(await call(api, 'GET', `/v1/runs?accountId=${accountA1}&campaignId=${campaignA2}`, a.token))).toEqual([]);
    expect(ids(await call(api, 'GET', `/v1/runs?accountId=${accountA2}`, a.token))).toEqual([other.id]);
    // the admin filters the same way
    expect(ids(await call(api, 'GET', `/v1/runs?accountId=${accountA1}&status=failed`, ADMIN_TOKEN))).toEqual([r2.id]);
  });

  test("another tenant's account finds nothing; a malformed id is a 400 naming accountId", async () => {
    await seedRun(api, campaignA1, 'success', { x: 'sent' });
    expect((await call(api, 'GET', `/v1/runs?accountId=${accountA1}`, b.token)).body).toEqual({ items: [], nextCursor: null });
    const bad = await call(api, 'GET', '/v1/runs?accountId=nope', a.token);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['accountId']);
  });
});

describe('GET /v1/runs?tenantId=', () => {
  test("the admin sees one tenant's runs, with the other filters and the cursor", async () => {
    const mine = await seedRun(api, campaignA2, 'paused', { x: 'pending' }, { createdAt: new Date(base + 10_000) });
    const theirs = await seedRun(api, campaignB, 'paused', { x: 'pending' }, { createdAt: new Date(base + 11_000) });
    const ofB = await allPages(`/v1/runs?tenantId=${b.id}`, ADMIN_TOKEN);
    expect(ofB).toContain(theirs.id);
    const rowsOfB = await api.db.selectFrom('runs').select('id').where('tenant_id', '=', b.id).execute();
    expect(ofB.sort()).toEqual(rowsOfB.map((r) => r.id).sort());
    const pausedOfA = ids(await call(api, 'GET', `/v1/runs?tenantId=${a.id}&status=paused`, ADMIN_TOKEN));
    expect(pausedOfA).toContain(mine.id);
    expect(pausedOfA).not.toContain(theirs.id);
    expect(ids(await call(api, 'GET', `/v1/runs?tenantId=${b.id}&accountId=${accountA2}`, ADMIN_TOKEN))).toEqual([]);
  });

  test('a tenant may name its own id; another tenant’s id gets an empty page', async () => {
    const own = await call(api, 'GET', `/v1/runs?tenantId=${a.id}`, a.token);
    expect(own.status).toBe(200);
    expect(ids(own)).toEqual(ids(await call(api, 'GET', '/v1/runs', a.token)));
    expect(ids(own).length).toBeGreaterThan(0);
    const foreign = await call(api, 'GET', `/v1/runs?tenantId=${b.id}`, a.token);
    expect(foreign).toMatchObject({ status: 200, body: { items: [], nextCursor: null } });
    // the same answer for a tenant that does not exist: it tells nothing about the other
    const missing = await call(api, 'GET', '/v1/runs?tenantId=00000000-0000-4000-8000-000000000000', a.token);
    expect(missing.body).toEqual(foreign.body);
    expect(fieldsOf(await call(api, 'GET', '/v1/runs?tenantId=1', ADMIN_TOKEN))).toEqual(['tenantId']);
  });
});

const fieldsOf = (res: { body: any }) => res.body.error.details.map((d: { field: string }) => d.field);

describe('each filter is one statement an index serves in the list order', () => {
  /** The plan of the list's statement, with sequential scans priced out so a small table shows which index can serve it. */
  async function planOf(filter: RunFilter): Promise<string> {
    const compiled = new RunControlRepository(api.db)
      .listQuery(filter, { limit: 51, before: { at: '2031-01-01T00:00:00.000000Z', id: '00000000-0000-4000-8000-000000000000' } })
      .compile(api.db);
    return api.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const result = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]));
      return JSON.stringify(result.rows[0]?.['QUERY PLAN']);
    });
  }

  test.each([
    ['accountId', () => ({ tenantId: null, accountId: accountA1 }), 'runs_account_idx'],
    // either index gives the order; the planner picks by the table's statistics
    [
      'accountId of a tenant, with status',
      () => ({ tenantId: a.id, accountId: accountA1, status: 'success' as const }),
      /runs_account_idx|runs_tenant_account_idx|runs_tenant_status_idx/,
    ],
    ['tenantId', () => ({ tenantId: b.id }), 'runs_tenant_idx'],
    // a tenant's campaign or account: without these the campaign's (account's) runs were all read and sorted
    ['campaignId of a tenant', () => ({ tenantId: a.id, campaignId: campaignA1 }), 'runs_tenant_campaign_idx'],
    ['accountId of a tenant', () => ({ tenantId: a.id, accountId: accountA1 }), 'runs_tenant_account_idx'],
    ['campaignId and accountId', () => ({ tenantId: a.id, campaignId: campaignA1, accountId: accountA1 }), 'runs_'],
    ['none: every tenant, newest first', () => ({ tenantId: null }), 'runs_newest_idx'],
    ['status across tenants, a finished one', () => ({ tenantId: null, status: 'success' as const }), 'runs_status_created_idx'],
    ['tenantId with a finished status', () => ({ tenantId: a.id, status: 'failed' as const }), 'runs_tenant_status_idx'],
  ])('%s', async (_name, filter, index) => {
    await sql`analyze runs`.execute(api.db);
    const plan = await planOf(filter());
    expect(plan).toMatch(new RegExp(`"Index Name":"${typeof index === 'string' ? index : `(${index.source})`}`));
    // the index gives the rows in the list's order: nothing is sorted
    expect(plan).not.toContain('"Node Type":"Sort"');
    expect(plan).not.toContain('"Node Type":"Seq Scan"');
  });
});

describe("a page's explanations read the targets of its open runs only", () => {
  /** The targets each scan of run_targets returned, over every time it ran, in the statement's real plan. */
  function targetsRead(node: any): number {
    const own = node['Relation Name'] === 'run_targets' ? node['Actual Rows'] * node['Actual Loops'] : 0;
    return own + (node.Plans ?? []).reduce((sum: number, child: any) => sum + targetsRead(child), 0);
  }

  test("a finished run's targets are not read: it waits for nothing", async () => {
    // a page of history is mostly finished runs: reading their targets to explain them read as
    // many targets as the page shows chats (the join tested the run's status after the aggregate)
    const chats = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`done-${i}`, 'sent' as const]));
    const finished = await seedRun(api, campaignA1, 'success', chats);
    const open = await seedRun(api, campaignA2, 'running', { a: 'pending', b: 'pending' });
    await sql`analyze run_targets`.execute(api.db);
    const compiled = new RunWaitingRepository(api.db).factsQuery([finished.id, open.id], new Date(), []).compile(api.db);
    const result = await api.db.executeQuery<{ 'QUERY PLAN': any }>(
      CompiledQuery.raw(`explain (analyze, format json) ${compiled.sql}`, [...compiled.parameters]),
    );
    // the open run's two targets (read once for its counts), none of the finished run's 300
    expect(targetsRead(result.rows[0]?.['QUERY PLAN'][0].Plan)).toBeLessThanOrEqual(2);
  });
});
