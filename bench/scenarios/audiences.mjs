import { apiCall, eventually } from '@metronome/testkit';
import { call, createAccounts, percentile, sandbox, START_LAG_STACK, withStack } from './common.mjs';

// Audiences (issue 33). audience-import: a 100,000-row CSV (a chat id and two variables a row)
// imported through the API, timed from the request to its answer, then the same file again
// (every row an update) and as a dry run. audience-run: a `once` campaign of a 10,000-member
// audience and one of 10 inline targets, due at the same moment on their own accounts; each
// run's start and its first message at the sandbox, minus scheduledAt, a few rounds.

const ROWS = 100_000;

function csvOf(rows) {
  const lines = ['chatId;name;city'];
  for (let i = 0; i < rows; i += 1) lines.push(`chat-${String(i).padStart(6, '0')};"Name ${i}";City ${i % 97}`);
  return Buffer.from(`\ufeff${lines.join('\r\n')}\r\n`, 'utf8');
}

async function timedUpload(stack, token, audienceId, body, query = '') {
  const started = performance.now();
  const res = await apiCall(stack.apiUrl, 'POST', `/v1/audiences/${audienceId}/members${query}`, token, body, { 'content-type': 'text/csv' });
  const seconds = (performance.now() - started) / 1000;
  if (res.status !== 200) throw new Error(`upload → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return { seconds, body: res.body };
}

export async function audienceImport(env) {
  const rows = env.quick ? 10_000 : ROWS;
  return withStack(env, { senders: 1 }, async ({ stack, token }) => {
    const csv = csvOf(rows);
    const audience = await call(stack, 'POST', '/v1/audiences', token, { name: 'bench import' });
    const dry = await timedUpload(stack, token, audience.id, csv, '?dryRun=true');
    const first = await timedUpload(stack, token, audience.id, csv);
    const again = await timedUpload(stack, token, audience.id, csv);
    const after = await call(stack, 'GET', `/v1/audiences/${audience.id}`, token);
    if (first.body.added !== rows || again.body.updated !== rows || after.memberCount !== rows)
      throw new Error(`counts: ${JSON.stringify({ first: first.body, again: again.body, after })}`);
    return {
      params: { rows, bytes: csv.length, columns: 'chatId;name;city' },
      figures: {
        [`import ${rows} rows s`]: first.seconds,
        [`re-import (all updates) s`]: again.seconds,
        [`dry run s`]: dry.seconds,
        'rows/s': rows / first.seconds,
      },
    };
  });
}

export async function audienceRun(env) {
  const members = env.quick ? 2_000 : 10_000;
  const rounds = env.quick ? 2 : 3;
  return withStack(env, START_LAG_STACK, async ({ stack, token }) => {
    const audience = await call(stack, 'POST', '/v1/audiences', token, {
      name: 'bench run',
      members: Array.from({ length: members }, (_, i) => ({ chatId: `m-${i}`, vars: { name: `Member ${i}` } })),
    });
    const accounts = await createAccounts(stack, token, rounds * 2, {});
    const samples = { audience: { start: [], first: [], created: [] }, inline: { start: [], first: [], created: [] } };
    for (let round = 0; round < rounds; round += 1) {
      const at = new Date(Date.now() + 6_000).toISOString();
      const campaign = (kind, account, extra) =>
        call(stack, 'POST', '/v1/campaigns', token, {
          accountId: account.id,
          name: `${kind} ${round}`,
          timezone: 'UTC',
          schedule: { type: 'once', at },
          messages: [{ type: 'text', text: 'Hi {{name}}' }],
          ...extra,
        }).then((c) => ({ kind, account, id: c.id }));
      const pair = await Promise.all([
        campaign('audience', accounts[round * 2], { audienceIds: [audience.id] }),
        campaign('inline', accounts[round * 2 + 1], {
          targets: Array.from({ length: 10 }, (_, i) => ({ chatId: `t-${round}-${i}`, vars: { name: `T${i}` } })),
        }),
      ]);
      for (const c of pair) {
        const run = await eventually(
          `${c.kind} run's first message`,
          async () => {
            const [r] = (await call(stack, 'GET', `/v1/runs?campaignId=${c.id}`, token)).items;
            if (!r?.startedAt) return null;
            const got = (await sandbox(stack, `/sandbox/messages?account=${c.account.externalId}`)).items;
            return got.length > 0 ? { ...r, firstAt: Math.min(...got.map((m) => m.receivedAt)) } : null;
          },
          60_000,
          50,
        );
        const scheduled = Date.parse(run.scheduledAt);
        samples[c.kind].created.push((Date.parse(run.createdAt) - scheduled) / 1000);
        samples[c.kind].start.push((Date.parse(run.startedAt) - scheduled) / 1000);
        samples[c.kind].first.push((run.firstAt - scheduled) / 1000);
        if (c.kind === 'audience' && run.counts.total !== members) throw new Error(`the audience run has ${run.counts.total} chats`);
        await apiCall(stack.apiUrl, 'POST', `/v1/runs/${run.id}/cancel`, token);
      }
    }
    const p50 = (v) => percentile(v, 50);
    return {
      params: { members, inlineTargets: 10, rounds, senders: START_LAG_STACK.senders, sandboxLatencyMs: 20, tickMs: 1000 },
      samples,
      figures: {
        [`audience run (${members}): created − scheduledAt p50 s`]: p50(samples.audience.created),
        [`audience run: first send − scheduledAt p50 s`]: p50(samples.audience.first),
        [`audience run: first send max s`]: Math.max(...samples.audience.first),
        'inline run (10): created − scheduledAt p50 s': p50(samples.inline.created),
        'inline run: first send − scheduledAt p50 s': p50(samples.inline.first),
        'inline run: first send max s': Math.max(...samples.inline.first),
      },
    };
  });
}
