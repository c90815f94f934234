import { apiCall, sandboxGet, startPrismProxy, startStack as startProcesses, type Stack as Processes } from '@metronome/testkit';
import { createDb } from '@metronome/db';
import { createTestDatabase, eventually, uniquePrefix, REDIS_URL, type TestDatabase } from './test-env.js';

/** The whole stack as processes on a fresh test database and Redis prefix. */
export interface Stack extends Processes {
  db: TestDatabase;
  keyPrefix: string;
}

export async function startStack(
  options: {
    senders?: number;
    env?: Record<string, string>;
    senderEnv?: Record<string, string>;
    sandboxEnv?: Record<string, string>;
    schedulerEnv?: Record<string, string>;
    prism?: boolean;
  } = {},
): Promise<Stack> {
  const db = await createTestDatabase('e2e');
  const keyPrefix = uniquePrefix('e2e');
  try {
    const processes = await startProcesses({ databaseUrl: db.url, redisUrl: REDIS_URL, keyPrefix, ...options });
    return {
      ...processes,
      db,
      keyPrefix,
      stop: async () => {
        try {
          await processes.stop();
        } finally {
          await db.drop();
        }
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

type StackOptions = Parameters<typeof startStack>[0];

/** What a test file reads of a stack: its addresses, its admin token, its senders' metrics and a database handle. */
export type StackView = Pick<Stack, 'apiUrl' | 'sandboxUrl' | 'adminToken' | 'senderMetricsPorts' | 'db' | 'keyPrefix' | 'stop'>;

/** The shared stack's senders: two, as the end-to-end files that share it were written for. */
export const SHARED_STACK_SENDERS = 2;

/**
 * The run's shared default stack (`startStack({ senders: 2 })`, started by test/global-setup.mjs
 * when the run holds a file that uses it), or null when there is none (a run of other files). A
 * file on it makes its own tenants and sandbox accounts (externalIds no other file uses) and
 * judges only their records; it may not change what all share (the sandbox's settings or
 * receipts, a service's environment) nor read what every tenant sees (the admin's lists).
 * Its stop closes only this file's database handle.
 */
export function sharedStack(): StackView | null {
  const env = process.env['METRONOME_TEST_SHARED_STACK'];
  if (!env) return null;
  const shared = JSON.parse(env) as {
    apiUrl: string;
    sandboxUrl: string;
    adminToken: string;
    senderMetricsPorts: number[];
    databaseUrl: string;
    databaseName: string;
    keyPrefix: string;
  };
  const db = createDb({ url: shared.databaseUrl, max: 2, applicationName: 'metronome-test' });
  const drop = () => db.destroy();
  return { ...shared, db: { url: shared.databaseUrl, name: shared.databaseName, db, drop }, stop: drop };
}

/**
 * An end-to-end file's prelude on the shared stack (sharedStack says what such a file may not
 * do), or on a stack of its own with as many senders when the run has none (the file run
 * alone). With `prism`, this file's own Prism proxy in front of the API (a start costs about
 * 6–8 s): its stop fails on what Prism found, as startStack's does.
 */
export function sharedStackForFile(options: { prism?: boolean } = {}): StackView {
  const view = {} as StackView;
  beforeAll(async () => {
    const shared = sharedStack();
    if (!shared) return void Object.assign(view, await startStack({ senders: SHARED_STACK_SENDERS, ...options }));
    try {
      const prism = options.prism ? await startPrismProxy(shared.apiUrl) : undefined;
      Object.assign(view, shared, {
        apiUrl: prism?.url ?? shared.apiUrl,
        stop: async () => {
          await shared.stop();
          await prism?.stop();
          const violations = prism?.mismatches() ?? [];
          if (violations.length)
            throw new Error(
              `the API and its OpenAPI document disagree (Prism):\n${violations.map((v) => `${v.request} → ${v.status}: ${v.message}`).join('\n')}`,
            );
        },
      });
    } catch (error) {
      await shared.stop();
      throw error;
    }
  }, 60_000);
  afterAll(async () => {
    await view.stop?.();
  }, 60_000);
  return view;
}

/**
 * The end-to-end files' prelude: a stack started before the file's tests (60 s allowed) and
 * stopped after them. The object returned is filled in by the beforeAll, so a test reads it as
 * the stack itself; a file whose stack did not start stops nothing.
 */
export function stackForFile(options: StackOptions = {}): Stack {
  const stack = {} as Stack;
  beforeAll(async () => {
    Object.assign(stack, await startStack(options));
  }, 60_000);
  afterAll(async () => {
    await stack.stop?.();
  }, 60_000);
  return stack;
}

/** A tenant made through the API by the admin: the answer, whose body carries the tenant's token. */
export const createTenant = (stack: StackView, name: string) => api(stack, 'POST', '/v1/tenants', stack.adminToken, { name });

/** An `http` account made through the API, with the sandbox API key every test uses unless told; the answer. */
export const createHttpAccount = (stack: StackView, token: string, fields: Record<string, unknown>) =>
  api(stack, 'POST', '/v1/accounts', token, { platform: 'http', credentials: { apiKey: 'sandbox-api-key-0001' }, ...fields });

export const api = <T = any>(stack: Pick<Stack, 'apiUrl'>, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  apiCall<T>(stack.apiUrl, method, path, token, body, headers);

export const sandbox = <T = any>(stack: Pick<Stack, 'sandboxUrl'>, path: string) => sandboxGet<T>(stack.sandboxUrl, path);

/** One message as the sandbox recorded it (`GET /sandbox/messages`). */
export interface SandboxMessage {
  seq: number;
  account: string;
  chatId: string;
  idempotencyKey: string;
  partIndex: number;
  partCount: number;
  part: { type: string; text?: string; mediaRef?: string; caption?: string };
  receivedAt: number;
  stampSlackMs: number; // how much earlier than receivedAt it may have come (the sandbox's loop was held up); 0 when it kept up
  answeredAt: number | null; // when the sandbox wrote its answer; null while in flight
}

/** A run as GET /v1/runs lists it, with the counts the tests read. */
export interface ListedRun {
  id: string;
  status: string;
  counts: { sent: number; unknown: number; failed: number };
}

/** Waits until every run of `runIds` has left queued/running, polling the run list (one request per poll: the API limits requests per token). */
export function runsToEnd(stack: Pick<Stack, 'apiUrl'>, token: string, runIds: string[], timeoutMs: number, everyMs: number): Promise<ListedRun[]> {
  return eventually(
    'every run to finish',
    async () => {
      const page = await api(stack, 'GET', '/v1/runs?limit=500', token);
      if (page.status !== 200) return null;
      const all = (page.body.items as ListedRun[]).filter((r) => runIds.includes(r.id));
      return all.length === runIds.length && all.every((r) => !['queued', 'running'].includes(r.status)) ? all : null;
    },
    timeoutMs,
    everyMs,
  );
}
