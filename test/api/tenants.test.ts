import { sql } from 'kysely';
import { ADMIN_TOKEN, call, createTenant, startApi, type Api, type Tenant } from './harness.js';

// GET /v1/tenants: the operator's list of tenants, newest first, paged; never a token.

let api: Api;
beforeAll(async () => {
  api = await startApi('api_tenants');
}, 30_000);
afterAll(async () => api.close());

test('the admin pages through every tenant newest first, each shown once; no token or hash is answered', async () => {
  const created: Tenant[] = [];
  for (const name of ['first', 'second', 'third', 'fourth']) created.push(await createTenant(api, name));
  const base = Date.parse('2030-01-10T00:00:00Z');
  // 'second' and 'third' at the same instant (the id breaks the tie); 'fourth' half a millisecond
  // after 'first', equal as JS Dates, so the cursor must keep microseconds.
  const at = [base, base + 1000, base + 1000, base];
  for (const [i, t] of created.entries()) await sql`update tenants set created_at = ${new Date(at[i]!)} where id = ${t.id}::uuid`.execute(api.db);
  await sql`update tenants set created_at = created_at + interval '500 microseconds' where id = ${created[3]!.id}::uuid`.execute(api.db);

  const seen: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await call(api, 'GET', `/v1/tenants?limit=1${cursor ? `&cursor=${cursor}` : ''}`, ADMIN_TOKEN);
    expect(page.status).toBe(200);
    seen.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor);
  const tied = [created[1]!.id, created[2]!.id].sort().reverse();
  expect(seen.map((t) => t.id)).toEqual([...tied, created[3]!.id, created[0]!.id]);
  expect(seen.find((t) => t.id === created[0]!.id)).toEqual({ id: created[0]!.id, name: 'first', createdAt: new Date(base).toISOString() });

  const all = await call(api, 'GET', '/v1/tenants', ADMIN_TOKEN);
  expect(all.body.nextCursor).toBeNull();
  const text = JSON.stringify(all.body);
  const hashes = await api.db.selectFrom('tenants').select('token_hash').execute();
  for (const { token_hash } of hashes) expect(text).not.toContain(token_hash);
  for (const t of created) expect(text).not.toContain(t.token);
  for (const item of all.body.items) expect(Object.keys(item).sort()).toEqual(['createdAt', 'id', 'name']);
});

test('a tenant token is a 401 as for creating tenants; no token is a 401', async () => {
  const tenant = await createTenant(api, 'not-admin');
  const res = await call(api, 'GET', '/v1/tenants', tenant.token);
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('unauthorized');
  expect(JSON.stringify(res.body)).not.toContain(tenant.id);
  expect((await call(api, 'GET', '/v1/tenants', null)).status).toBe(401);
});

test('a bad limit or cursor is a 400 naming it', async () => {
  for (const [query, field] of [
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['cursor=nope', 'cursor'],
  ]) {
    const res = await call(api, 'GET', `/v1/tenants?${query}`, ADMIN_TOKEN);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  }
});

test('/openapi.json documents the list without a token field', async () => {
  const doc = JSON.parse((await api.app.inject({ method: 'GET', url: '/openapi.json' })).body);
  expect(doc.paths['/v1/tenants'].get).toBeDefined();
  expect(Object.keys(doc.components.schemas.Tenant.properties).sort()).toEqual(['createdAt', 'id', 'name']);
});
