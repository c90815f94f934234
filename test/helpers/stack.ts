import { apiCall, sandboxGet, startStack as startProcesses, type Stack as Processes } from '@metronome/testkit';
import { createTestDatabase, uniquePrefix, REDIS_URL, type TestDatabase } from './test-env.js';

/** The whole stack as processes on a fresh test database and Redis prefix. */
export interface Stack extends Processes {
  db: TestDatabase;
  keyPrefix: string;
}

export async function startStack(options: { senders?: number; env?: Record<string, string>; senderEnv?: Record<string, string>; sandboxEnv?: Record<string, string> } = {}): Promise<Stack> {
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

export const api = <T = any>(stack: Stack, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  apiCall<T>(stack.apiUrl, method, path, token, body, headers);

export const sandbox = <T = any>(stack: Stack, path: string) => sandboxGet<T>(stack.sandboxUrl, path);
