import { apiCall, sandboxGet, startStack as startProcesses, type Stack as Processes } from '@metronome/testkit';
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
export const createTenant = (stack: Stack, name: string) => api(stack, 'POST', '/v1/tenants', stack.adminToken, { name });

/** An `http` account made through the API, with the sandbox API key every test uses unless told; the answer. */
export const createHttpAccount = (stack: Stack, token: string, fields: Record<string, unknown>) =>
  api(stack, 'POST', '/v1/accounts', token, { platform: 'http', credentials: { apiKey: 'sandbox-api-key-0001' }, ...fields });

export const api = <T = any>(stack: Stack, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  apiCall<T>(stack.apiUrl, method, path, token, body, headers);

export const sandbox = <T = any>(stack: Stack, path: string) => sandboxGet<T>(stack.sandboxUrl, path);

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
export function runsToEnd(stack: Stack, token: string, runIds: string[], timeoutMs: number, everyMs: number): Promise<ListedRun[]> {
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
