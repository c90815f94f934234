import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { ADMIN_TOKEN, campaignBody, createCampaign, createTenant, seedRun, startApi, type Api, type Tenant } from './harness.js';

// Property: whatever body, query string or headers a client sends to a write route (and
// whatever query string to a list route), the API answers below 500, and every 4xx carries the
// contract's error body. Thousands of generated requests; a counterexample is printed by
// fast-check with its seed so it can be replayed.

let api: Api;
let tenant: Tenant;
let campaignId: string;
let accountId: string;
let runId: string;
beforeAll(async () => {
  api = await startApi('api_hostile');
  tenant = await createTenant(api, 'hostile');
  const campaign = await createCampaign(api, tenant);
  campaignId = campaign.id;
  accountId = campaign.accountId;
  runId = (await seedRun(api, campaignId, 'paused', { a: 'pending', b: 'sent' })).id;
}, 30_000);
afterAll(async () => api.close());

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '💥'.repeat(300),
  'x'.repeat(5000),
  '__proto__',
  'constructor',
  '../../etc/passwd',
  '%00',
  '%',
  '%ZZ',
  "'; drop table runs; --",
  '<script>alert(1)</script>',
  '1e309',
  '-0',
  'NaN',
  'Infinity',
  '9999999999999999999999999',
  '2030-02-30T25:61:00Z',
  '24:00',
  '00:60',
  'Asia/Nowhere',
  '* * * * * * *',
  '00000000-0000-0000-0000-000000000000',
  'null',
  'true',
  '{}',
  '[]',
];

// fast-check's `unit: 'binary'` with the same values for the same seed: the code points outside
// the surrogates, by index. Built here with its inverse, because the library's own unit maps all
// 1.1 million code points back to their index when first used (a second of CPU per file).
const SURROGATES = 0xe000 - 0xd800;
const binaryUnit = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (i) => String.fromCodePoint(i < 0xd800 ? i : i + SURROGATES),
  (ch) => {
    const point = typeof ch === 'string' ? ch.codePointAt(0) : undefined;
    if (point === undefined || String.fromCodePoint(point) !== ch || (point >= 0xd800 && point < 0xe000)) throw new Error('not one code point');
    return point < 0xd800 ? point : point - SURROGATES;
  },
);
const binaryString = (maxLength: number) => fc.string({ unit: binaryUnit, maxLength });
const hostileString = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), binaryString(40), fc.string({ maxLength: 10 }));
const hostileNumber = fc.oneof(
  fc.constantFrom(0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, 2 ** 63, 1e-300),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
// Any JSON value, biased towards the hostile ones above.
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(hostileString, fc.constantFrom('__proto__', 'type', 'text', 'at')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A valid body with one field replaced, removed or added, or a whole body replaced. */
function mutated(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  const added = fc.record({ key: hostileString, value: hostileValue }).map(({ key, value }) => ({ ...valid, [key]: value }));
  if (keys.length === 0) return fc.oneof(fc.constant(valid), added, hostileValue);
  return fc.oneof(
    fc.record({ key: fc.constantFrom(...keys), value: hostileValue }).map(({ key, value }) => ({ ...valid, [key]: value })),
    fc.constantFrom(...keys).map((key) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key))),
    fc.record({ key: hostileString, value: hostileValue }).map(({ key, value }) => ({ ...valid, [key]: value })),
    hostileValue,
  );
}

/** Raw payload text: JSON of the body, or a broken variant of it. */
function payloadOf(body: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: body.map((b) => JSON.stringify(b) ?? 'undefined') },
    { weight: 1, arbitrary: body.map((b) => (JSON.stringify(b) ?? '').slice(0, -1)) },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[1,2', 'nul', '"\\u12"', '{"__proto__":{"polluted":1}}', '\u0000', '\ufeff{}', '1'.repeat(400)) },
    { weight: 1, arbitrary: binaryString(60) },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '',
      ';;;',
      'application/json, text/plain',
    ),
  },
);

/** Percent-encodes even lone surrogates (as the bytes of their CESU-8 form: invalid UTF-8). */
function encode(text: string): string {
  return Array.from(text, (ch) => {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff)
      return `%${(0xe0 | (unit >> 12)).toString(16)}%${(0x80 | ((unit >> 6) & 0x3f)).toString(16)}%${(0x80 | (unit & 0x3f)).toString(16)}`;
    return encodeURIComponent(ch);
  }).join('');
}

const queryString = fc
  .array(
    fc.tuple(fc.constantFrom('limit', 'cursor', 'status', 'campaignId', 'tenantId', 'filename', 'x', '__proto__', 'limit[]', 'status[0]'), hostileString),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&'));

/** Raw query strings that are not well-formed percent-encoding. */
const rawQuery = fc.oneof(
  queryString,
  fc.constantFrom('limit=%', 'cursor=%E0%A4%A', 'limit=1&limit=2', 'status=paused&status=queued', '&&&', '=', 'limit', `cursor=${'A'.repeat(3000)}`),
);

const extraHeaders = fc.record(
  {
    'last-event-id': hostileString.filter((s) => /^[\t\x20-\x7e]*$/.test(s)),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'garbage', ''),
    accept: fc.constantFrom('*/*', 'text/event-stream', 'application/xml', ''),
  },
  { requiredKeys: [] },
);

interface Answer {
  status: number;
  body: string;
}

function assertAnswer(route: string, res: Answer): void {
  if (res.status >= 500) throw new Error(`${route} answered ${res.status}: ${res.body}`);
  if (res.status >= 400) {
    const body = JSON.parse(res.body) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const error = body.error;
    if (typeof error?.code !== 'string' || typeof error.message !== 'string' || !Array.isArray(error.details)) {
      throw new Error(`${route} answered ${res.status} without the error body: ${res.body}`);
    }
    for (const d of error.details as { field?: unknown; message?: unknown }[]) {
      if (typeof d.field !== 'string' || typeof d.message !== 'string') throw new Error(`${route}: malformed detail ${JSON.stringify(d)}`);
    }
  }
}

async function send(method: string, url: string, headers: Record<string, string>, payload?: string | Buffer): Promise<Answer> {
  const res = await api.app.inject({ method: method as 'POST', url, headers, ...(payload !== undefined && { payload }) });
  return { status: res.statusCode, body: res.body };
}

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 300);

interface WriteRoute {
  method: string;
  name: string;
  path: () => string;
  valid: () => Record<string, unknown>;
  admin?: boolean;
}

const writeRoutes: WriteRoute[] = [
  { method: 'POST', name: '/v1/tenants', path: () => '/v1/tenants', valid: () => ({ name: 'T' }), admin: true },
  {
    method: 'POST',
    name: '/v1/accounts',
    path: () => '/v1/accounts',
    valid: () => ({ platform: 'http', credentials: { apiKey: 'sandbox-api-key-0001' }, name: 'a', externalId: 'ext-1' }),
  },
  {
    method: 'POST',
    name: '/v1/accounts (telegram)',
    path: () => '/v1/accounts',
    valid: () => ({ platform: 'telegram', name: 'a', credentials: { botToken: '123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ' } }),
  },
  {
    method: 'PATCH',
    name: '/v1/accounts/:id',
    path: () => `/v1/accounts/${accountId}`,
    valid: () => ({ name: 'b', status: 'active', maxSendPerMinute: 10, groupConcurrency: null }),
  },
  { method: 'POST', name: '/v1/campaigns', path: () => '/v1/campaigns', valid: () => campaignBody(accountId) },
  {
    method: 'PATCH',
    name: '/v1/campaigns/:id',
    path: () => `/v1/campaigns/${campaignId}`,
    valid: () => ({ name: 'n', timezone: 'Europe/Paris', deliveryWindow: { start: '06:00', end: '20:00' }, active: true }),
  },
  { method: 'POST', name: '/v1/campaigns/:id/runs', path: () => `/v1/campaigns/${campaignId}/runs`, valid: () => ({}) },
  { method: 'POST', name: '/v1/runs/:id/pause', path: () => `/v1/runs/${runId}/pause`, valid: () => ({}) },
  { method: 'POST', name: '/v1/runs/:id/resume', path: () => `/v1/runs/${runId}/resume`, valid: () => ({}) },
  { method: 'POST', name: '/v1/runs/:id/cancel', path: () => `/v1/runs/${runId}/cancel`, valid: () => ({}) },
  { method: 'POST', name: '/v1/runs/:id/retry-failed', path: () => `/v1/runs/${runId}/retry-failed`, valid: () => ({}) },
];

describe('hostile bodies, query strings and headers at every write route', () => {
  for (const route of writeRoutes) {
    test(`${route.method} ${route.name}`, async () => {
      await fc.assert(
        fc.asyncProperty(payloadOf(mutated(route.valid())), contentType, queryString, extraHeaders, async (payload, type, query, headers) => {
          const url = query ? `${route.path()}?${query}` : route.path();
          const token = route.admin ? ADMIN_TOKEN : tenant.token;
          const res = await send(route.method, url, { ...headers, authorization: `Bearer ${token}`, 'content-type': type }, payload);
          assertAnswer(`${route.method} ${url}`, res);
        }),
        { numRuns: RUNS },
      );
    }, 120_000);
  }

  test('POST /v1/media with hostile content types, query strings and bytes', async () => {
    const mediaType = fc.oneof(
      fc.constantFrom('image/png', 'IMAGE/PNG; charset=x', 'application/json', 'text/plain', '', ';', 'a/b/c', 'image/', '/png', 'x'.repeat(300)),
      fc.string({ maxLength: 30 }).filter((s) => /^[\t\x20-\x7e]*$/.test(s)),
    );
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), mediaType, rawQuery, async (bytes, type, query) => {
        const url = query ? `/v1/media?${query}` : '/v1/media';
        const headers: Record<string, string> = { authorization: `Bearer ${tenant.token}` };
        if (type !== '') headers['content-type'] = type;
        assertAnswer(`POST ${url}`, await send('POST', url, headers, Buffer.from(bytes)));
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  test('DELETE /v1/campaigns/{id} with hostile ids and bodies', async () => {
    const idSegment = fc.oneof(fc.uuid(), hostileString.map(encode), fc.constantFrom('%', '%2F', '..', campaignId.toUpperCase()));
    await fc.assert(
      fc.asyncProperty(idSegment, payloadOf(hostileValue), async (id, payload) => {
        const url = `/v1/campaigns/${id}`;
        assertAnswer(`DELETE ${url}`, await send('DELETE', url, { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, payload));
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});

describe('hostile cron expressions', () => {
  // The schedule is nested, so the mutations above seldom reach its expression: every hostile
  // string, every name a plain object inherits, and generated text go there directly.
  const expression = fc.oneof(
    fc.constantFrom(...HOSTILE_STRINGS, ...Object.getOwnPropertyNames(Object.prototype), '@__proto__', 'constructor * * * *', '* * * * __proto__', '@hourly'),
    hostileString,
    fc
      .array(fc.constantFrom('*', '0', '1-5', '*/5', 'jan', 'sun', 'constructor', '__proto__', 'L', '#', '?', 'W'), { minLength: 1, maxLength: 7 })
      .map((f) => f.join(' ')),
  );
  test('POST /v1/campaigns answers 201 or a 400 with the error body, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(expression, async (text) => {
        const body = JSON.stringify(campaignBody(accountId, { schedule: { type: 'cron', expression: text } }));
        const res = await send('POST', '/v1/campaigns', { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, body);
        assertAnswer(`POST /v1/campaigns (cron ${JSON.stringify(text)})`, res);
        expect([201, 400]).toContain(res.status);
      }),
      { numRuns: RUNS, examples: [['__proto__'], ['constructor']] },
    );
  }, 120_000);
});

describe('hostile query strings at every list and read route', () => {
  const reads: [string, () => string][] = [
    ['/v1/accounts', () => '/v1/accounts'],
    ['/v1/media', () => '/v1/media'],
    ['/v1/campaigns', () => '/v1/campaigns'],
    ['/v1/runs', () => '/v1/runs'],
    ['/v1/runs/:id', () => `/v1/runs/${runId}`],
    ['/v1/runs/:id/targets', () => `/v1/runs/${runId}/targets`],
    ['/v1/campaigns/:id', () => `/v1/campaigns/${campaignId}`],
    ['/v1/accounts/:id', () => `/v1/accounts/${accountId}`],
    ['/v1/me', () => '/v1/me'],
  ];
  for (const [name, path] of reads) {
    test(`GET ${name}`, async () => {
      await fc.assert(
        fc.asyncProperty(rawQuery, fc.boolean(), async (query, admin) => {
          const url = query ? `${path()}?${query}` : path();
          assertAnswer(`GET ${url}`, await send('GET', url, { authorization: `Bearer ${admin ? ADMIN_TOKEN : tenant.token}` }));
        }),
        { numRuns: RUNS },
      );
    }, 120_000);
  }
});

describe('hostile Authorization headers', () => {
  test('never a 5xx, always 401 with the error body unless the token is real', async () => {
    const authorization = fc.oneof(
      fc.constantFrom(
        'Bearer',
        'Bearer ',
        `bearer ${ADMIN_TOKEN.slice(0, -1)}`,
        'Basic x',
        `Bearer ${'a'.repeat(5000)}`,
        `Bearer ${ADMIN_TOKEN} extra`,
        'Bearer mtr_',
      ),
      fc
        .string({ maxLength: 60 })
        .filter((s) => /^[\t\x20-\x7e]*$/.test(s))
        .map((s) => `Bearer ${s}`),
    );
    await fc.assert(
      fc.asyncProperty(authorization, fc.constantFrom('/v1/me', '/v1/campaigns', `/v1/runs/${runId}`), async (auth, url) => {
        const res = await send('GET', url, { authorization: auth });
        assertAnswer(`GET ${url}`, res);
        expect(res.status).toBe(401);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});

describe('hostile Last-Event-ID and query strings at the event stream', () => {
  test('GET /v1/events opens (200) or refuses with the error body; never a 5xx', async () => {
    // A stream never ends, so this one needs a listening server: read the head, then hang up.
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    const lastEventId = fc.oneof(
      fc.constantFrom('0', '-1', '1.5', '1e3', '99999999999999999999999', '0x10', ' 7 ', '', '9007199254740993', 'abc'),
      fc.string({ maxLength: 30 }).filter((v) => /^[\t\x20-\x7e]*$/.test(v)),
    );
    await fc.assert(
      fc.asyncProperty(lastEventId, rawQuery, fc.boolean(), async (id, query, admin) => {
        const url = `${base}/v1/events${query ? `?${query}` : ''}`;
        const res = await new Promise<Answer>((resolve, reject) => {
          const req = http.get(url, { headers: { authorization: `Bearer ${admin ? ADMIN_TOKEN : tenant.token}`, 'last-event-id': id } }, (r) => {
            if (r.statusCode === 200) {
              req.destroy();
              return resolve({ status: 200, body: '' });
            }
            let body = '';
            r.setEncoding('utf8');
            r.on('data', (c: string) => (body += c));
            r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
          });
          req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
        });
        assertAnswer(`GET /v1/events (Last-Event-ID ${JSON.stringify(id)})`, res);
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  }, 120_000);
});
