import { ChatDirectoryRepository } from '@metronome/db';
import { apiForFile, call, campaignBody, createAccount, createCampaign, createTenant, fields, tenantForFile } from './harness.js';

// Personal messages at the API: targets with variables, templates checked at create, PATCH and
// preview, the run's own copy of each chat's variables.

const api = apiForFile('api_campaigns_personal');
const t = tenantForFile(api, 'personal');
let accountId: string;
beforeAll(async () => {
  accountId = await createAccount(api, t);
});

const personal = {
  messages: [{ type: 'text', text: '{Hi|Hello|Hey} {{name}}!' }],
  targets: [
    { chatId: 'ann', vars: { name: 'Ann', city: 'Oslo' } },
    { chatId: 'bo', vars: { name: 'Bo' } },
  ],
};

describe('targets with variables', () => {
  test('a campaign with object targets round-trips: targets are shown as given, strings stay strings', async () => {
    const body = campaignBody(accountId, { ...personal, targets: [...personal.targets, 'plain'], messages: [{ type: 'text', text: '{Hi|Hello} there' }] });
    const res = await call(api, 'POST', '/v1/campaigns', t.token, body);
    expect(res.status).toBe(201);
    expect(res.body.targets).toEqual(body['targets']);
    expect(res.body.messages).toEqual(body['messages']);
    const got = await call(api, 'GET', `/v1/campaigns/${res.body.id}`, t.token);
    expect(got.body.targets).toEqual(body['targets']);
    const listed = await call(api, 'GET', '/v1/campaigns', t.token);
    expect(listed.body.items.find((c: { id: string }) => c.id === res.body.id).targets).toEqual(body['targets']);
  });

  test('a campaign without variables answers exactly as before', async () => {
    const res = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(accountId, { targets: ['g1', 'g2'] }));
    expect(res.body.targets).toEqual(['g1', 'g2']);
    const row = await api.db.selectFrom('campaigns').select('target_vars').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.target_vars).toBeNull();
  });

  test('a PATCH of other fields keeps the variables; a PATCH of targets replaces them', async () => {
    const { id } = await createCampaign(api, t, personal);
    const renamed = await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { name: 'renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.targets).toEqual(personal.targets);
    const replaced = await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { targets: [{ chatId: 'cy', vars: { name: 'Cy' } }] });
    expect(replaced.status).toBe(200);
    expect(replaced.body.targets).toEqual([{ chatId: 'cy', vars: { name: 'Cy' } }]);
  });

  test('a run keeps its own copy of each chat’s variables, whatever the campaign says later', async () => {
    const { id } = await createCampaign(api, t, { ...personal, targets: [...personal.targets, 'plain'], messages: [{ type: 'text', text: '{Hi|Hello}' }] });
    const run = await call(api, 'POST', `/v1/campaigns/${id}/runs`, t.token);
    expect(run.status).toBe(201);
    await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { targets: [{ chatId: 'ann', vars: { name: 'Anna' } }] });
    const rows = await api.db.selectFrom('run_targets').select(['chat_id', 'vars']).where('run_id', '=', run.body.id).orderBy('chat_id').execute();
    expect(rows).toEqual([
      { chat_id: 'ann', vars: { name: 'Ann', city: 'Oslo' } },
      { chat_id: 'bo', vars: { name: 'Bo' } },
      { chat_id: 'plain', vars: null },
    ]);
  });

  test.each([
    ['a variable name that is not one', [{ chatId: 'x', vars: { 'first name': 'A' } }], 'vars.first name'],
    ['a value over 1,000 characters', [{ chatId: 'x', vars: { name: 'a'.repeat(1001) } }], 'vars.name'],
    ['more than 50 variables', [{ chatId: 'x', vars: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])) }], 'vars'],
    ['a value that is not a string', [{ chatId: 'x', vars: { name: 1 } }], 'vars.name'],
    ['a missing chatId', [{ vars: {} }], 'chatId'],
  ])('400 for %s, naming the target and the field inside it', async (_what, targets, inner) => {
    const res = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(accountId, { targets: ['ok', ...targets] }));
    expect(res.status).toBe(400);
    // The path is the field's, or (where zod can only say the target did not match) the field
    // names the target and the message starts with the path inside it.
    expect(res.body.error.details).toHaveLength(1);
    const [{ field, message }] = res.body.error.details;
    expect(`${field}.${message}`.startsWith(`targets.1.${inner}`)).toBe(true);
  });

  test('400 for an unknown field in a target, naming it', async () => {
    const res = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(accountId, { targets: [{ chatId: 'x', vars: {}, extra: 1 }] }));
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['targets.0.extra']);
  });

  test('repeated chat ids are refused across both shapes', async () => {
    const res = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(accountId, { targets: ['x', { chatId: 'x', vars: {} }] }));
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['targets']);
  });
});

describe('a variable missing for a target', () => {
  const missing = {
    messages: [
      { type: 'text', text: 'Hello {{name}}' },
      { type: 'text', text: 'See you in {{city}}' },
    ],
    targets: [{ chatId: 'ann', vars: { name: 'Ann', city: 'Oslo' } }, { chatId: 'bo', vars: { name: 'Bo' } }, 'plain'],
  };

  test('is a 400 at create naming the first target missing each variable, and the message using it', async () => {
    const before = await api.db
      .selectFrom('campaigns')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const res = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(accountId, missing));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([
      { field: 'targets.2.vars.name', message: expect.stringContaining('messages.0.text uses {{name}}') },
      { field: 'targets.1.vars.city', message: expect.stringContaining('messages.1.text uses {{city}}') },
    ]);
    const after = await api.db
      .selectFrom('campaigns')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  test('is the same 400 at preview', async () => {
    const res = await call(api, 'POST', '/v1/campaigns/preview', t.token, campaignBody(accountId, missing));
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['targets.2.vars.name', 'targets.1.vars.city']);
  });

  test('is a 400 at PATCH, for new texts against the stored targets and new targets against the stored texts', async () => {
    const { id } = await createCampaign(api, t, personal);
    const texts = await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { messages: [{ type: 'text', text: 'Hi {{name}} from {{city}}' }] });
    expect(texts.status).toBe(400);
    expect(fields(texts)).toEqual(['targets.1.vars.city']);
    const targets = await call(api, 'PATCH', `/v1/campaigns/${id}`, t.token, { targets: ['plain', ...personal.targets] });
    expect(targets.status).toBe(400);
    expect(fields(targets)).toEqual(['targets.0.vars.name']);
    expect((await call(api, 'GET', `/v1/campaigns/${id}`, t.token)).body.targets).toEqual(personal.targets);
  });

  test('a caption counts like a text', async () => {
    const media = await api.app.inject({
      method: 'POST',
      url: '/v1/media',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'image/png' },
      payload: Buffer.from('png'),
    });
    const res = await call(
      api,
      'POST',
      '/v1/campaigns',
      t.token,
      campaignBody(accountId, { messages: [{ type: 'media', mediaId: JSON.parse(media.body).id, caption: 'For {{name}}' }], targets: ['plain'] }),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'targets.0.vars.name', message: expect.stringContaining('messages.0.caption uses {{name}}') }]);
  });
});

describe('templates stay logic-less', () => {
  test.each([
    ['a section', '{{#vip}}Dear{{/vip}} customer'],
    ['a partial', 'Hello {{> footer}}'],
    ['an unclosed tag', 'Hello {{name'],
  ])('%s is a 400 naming the message field', async (_what, text) => {
    const res = await call(
      api,
      'POST',
      '/v1/campaigns',
      t.token,
      campaignBody(accountId, {
        messages: [
          { type: 'text', text: 'ok' },
          { type: 'text', text },
        ],
        targets: personal.targets,
      }),
    );
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['messages.1.text']);
  });

  test('variations alone need no variables, and plain braces stay text', async () => {
    const res = await call(
      api,
      'POST',
      '/v1/campaigns',
      t.token,
      campaignBody(accountId, { messages: [{ type: 'text', text: '{Hi|Hello}, price {in EUR}' }], targets: ['plain'] }),
    );
    expect(res.status).toBe(201);
  });
});

describe('fallbacks and chats named by title', () => {
  test('a variable with a fallback needs no value: picked chats without variables are accepted at create and at preview', async () => {
    const body = campaignBody(accountId, {
      messages: [{ type: 'text', text: 'Hello {{name|friends}}' }],
      targets: ['g-1', { chatId: 'ann', vars: { name: 'Ann' } }],
    });
    const res = await call(api, 'POST', '/v1/campaigns', t.token, body);
    expect(res.status).toBe(201);
    const preview = await call(api, 'POST', '/v1/campaigns/preview', t.token, body);
    expect(preview.status).toBe(200);
  });

  test('a fallback holding | { or } is a 400 naming the field', async () => {
    const res = await call(
      api,
      'POST',
      '/v1/campaigns',
      t.token,
      campaignBody(accountId, { messages: [{ type: 'text', text: 'Hi {{name|a|b}}' }], targets: ['g'] }),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'messages.0.text', message: 'uses {{name|a|b}}: a fallback (after the |) may not hold |, { or }' }]);
  });

  test('a chat without a value and no fallback: the 400 names it by its directory title and id, and says how to fix it, in plain words', async () => {
    await new ChatDirectoryRepository(api.db).upsert(
      accountId,
      [{ chatId: 'cw-g-01', title: 'Café Central', kind: 'group', memberCount: 9, canSend: true, cannotSendReason: null }],
      new Date(),
    );
    const body = campaignBody(accountId, { messages: [{ type: 'text', text: 'Hello {{name}}' }], targets: ['cw-g-01'] });
    const res = await call(api, 'POST', '/v1/campaigns', t.token, body);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      {
        field: 'targets.0.vars.name',
        message:
          'messages.0.text uses {{name}}, and chat “\u2068Café Central\u2069” (\u2068cw-g-01\u2069) has no value for it: give this chat a value for name, or the tag a fallback ({{name|…}})',
      },
    ]);
    // a chat the directory does not know is named by its id
    const unknown = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(accountId, { ...body, targets: ['zz'] }));
    expect(unknown.body.error.details[0].message).toContain('chat “\u2068zz\u2069” has no value');
    // another tenant's account never lends its titles
    const other = await createTenant(api, 'personal-other');
    const otherAccount = await createAccount(api, other);
    await new ChatDirectoryRepository(api.db).upsert(
      otherAccount,
      [{ chatId: 'cw-g-01', title: 'Secret', kind: 'group', memberCount: 2, canSend: true, cannotSendReason: null }],
      new Date(),
    );
    const crossed = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(otherAccount, { ...body, accountId: otherAccount }));
    expect(JSON.stringify(crossed.body)).not.toContain('Secret');
  });
});
