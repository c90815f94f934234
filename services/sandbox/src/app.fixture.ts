// The sandbox app driven through inject() under a manual clock: shared by its route tests.
import { createHash } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildSandbox } from './app.js';
import type { Limits } from './limits.js';

export const T0 = 1_700_000_000_000;
export const open: Limits = { latencyMs: 0, maxPerMinute: 0, burst: 1, slowModeSeconds: 0, faultRate: 0, banHourlyCap: 0, banDailyCap: 0, banMinGapMs: 0 };

/** The manual clock: tests move `now`; the sandbox's sleeps are recorded in `slept` (or move `now` when asked). */
export const time = { now: T0, slept: [] as number[] };
let app: FastifyInstance | undefined;

/** A fresh sandbox at T0 with these limits; `sleepsMoveClock` makes its sleeps advance the clock instead of being recorded. */
export async function start(limits: Partial<Limits> = {}, sleepsMoveClock = false) {
  await stop();
  time.now = T0;
  time.slept = [];
  app = await buildSandbox({
    config: { limits: { ...open, ...limits }, seed: 1 },
    clock: () => time.now,
    sleep: async (ms) => {
      if (sleepsMoveClock) time.now += ms;
      else time.slept.push(ms);
    },
  });
}

export async function stop() {
  await app?.close();
  app = undefined;
}

export const keyOf = (account: string) => `key-of-${account}`;

/** A platform request carries its account's key unless the test gives an Authorization header itself. */
export const call = async (opts: InjectOptions) => {
  if (app === undefined) throw new Error('start() the sandbox first');
  const account = /^\/v1\/accounts\/([^/]+)\//.exec(String(opts.url))?.[1];
  const headers = { ...(account !== undefined && { authorization: `Bearer ${keyOf(decodeURIComponent(account))}` }), ...(opts.headers ?? {}) };
  const res = await app.inject({ ...opts, headers });
  const json = res.headers['content-type']?.toString().startsWith('application/json') ? res.json() : undefined;
  return { status: res.statusCode, body: json, raw: res };
};

let keys = 0;
export const send = (account: string, body: Record<string, unknown>, key: string | null = `run:${body['chatId']}:${++keys}`) =>
  call({
    method: 'POST',
    url: `/v1/accounts/${account}/messages`,
    headers: key === null ? {} : { 'idempotency-key': key },
    payload: body,
  });
export const textTo = (chatId: string, text = 'hello', partIndex = 0, partCount = 1) => ({ chatId, part: { type: 'text', text }, partIndex, partCount });

export const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
export const upload = (account: string, bytes: Buffer, contentType = 'image/png', declared: string | null = sha(bytes)) =>
  call({
    method: 'POST',
    url: `/v1/accounts/${account}/media`,
    headers: { 'content-type': contentType, ...(declared === null ? {} : { 'x-media-sha256': declared }) },
    payload: bytes,
  });
export const put = (url: string, payload: unknown) => call({ method: 'PUT', url, payload: payload as object });
export const get = (url: string) => call({ method: 'GET', url });
