import { randomBytes } from 'node:crypto';
import { createTestDatabase, uniquePrefix, REDIS_URL, eventually, type TestDatabase } from './test-env.js';
import { freePort, startService, type ServiceProcess } from './processes.js';

export interface Stack {
  db: TestDatabase;
  apiUrl: string;
  sandboxUrl: string;
  adminToken: string;
  keyPrefix: string;
  services: ServiceProcess[];
  senders: ServiceProcess[];
  senderMetricsPorts: number[];
  stop(): Promise<void>;
}

export interface StackOptions {
  senders?: number;
  env?: Record<string, string>;
  senderEnv?: Record<string, string>;
  sandboxEnv?: Record<string, string>;
}

/**
 * The whole of Metronome as separate processes on a fresh database and Redis prefix: sandbox,
 * control API, scheduler and N senders, talking over real HTTP, PostgreSQL and Redis.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const db = await createTestDatabase('e2e');
  const keyPrefix = uniquePrefix('e2e');
  const adminToken = `adm_${randomBytes(12).toString('hex')}`;
  const [apiPort, sandboxPort] = [await freePort(), await freePort()];
  const common = { DATABASE_URL: db.url, REDIS_URL, KEY_PREFIX: keyPrefix, ...options.env };
  const services: ServiceProcess[] = [];
  try {
    const sandbox = startService('sandbox', 'services/sandbox/dist/main.js', { ...common, SANDBOX_PORT: String(sandboxPort), ...options.sandboxEnv });
    services.push(sandbox);
    const api = startService('api', 'services/control-api/dist/server.js', { ...common, PORT: String(apiPort), HOST: '127.0.0.1', ADMIN_TOKEN: adminToken, MIN_INTERVAL_SECONDS: '1' });
    services.push(api);
    const scheduler = startService('scheduler', 'services/scheduler/dist/main.js', { ...common, METRICS_PORT: '0', SCHEDULER_TICK_MS: '200' });
    services.push(scheduler);
    const senders: ServiceProcess[] = [];
    for (let i = 0; i < (options.senders ?? 2); i++) {
      const sender = startService(`sender-${i + 1}`, 'services/sender/dist/main.js', {
        ...common,
        METRICS_PORT: '0',
        HTTP_TRANSPORT_URL: `http://127.0.0.1:${sandboxPort}`,
        ...options.senderEnv,
      });
      senders.push(sender);
      services.push(sender);
    }
    const ready = await Promise.all(senders.map((s) => s.waitForLog((l) => l['msg'] === 'sender ready')));
    await scheduler.waitForLog((l) => l['msg'] === 'scheduler ready');
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    await eventually('the API to be ready', async () => (await fetch(`${apiUrl}/readyz`).catch(() => null))?.ok, 20_000);
    await eventually('the sandbox to answer', async () => (await fetch(`${sandboxUrl}/healthz`).catch(() => null))?.ok, 20_000);
    return {
      db,
      apiUrl,
      sandboxUrl,
      adminToken,
      keyPrefix,
      services,
      senders,
      senderMetricsPorts: ready.map((l) => Number(l['metricsPort'])),
      stop: async () => {
        const codes = await Promise.all(services.map((s) => s.stop()));
        await db.drop();
        const failed = services.filter((_, i) => codes[i] !== 0 && codes[i] !== null);
        if (failed.length) throw new Error(`services did not exit cleanly on SIGTERM: ${failed.map((s) => s.name).join(', ')}`);
      },
    };
  } catch (error) {
    await Promise.all(services.map((s) => s.stop('SIGKILL')));
    await db.drop();
    throw error;
  }
}

/** A JSON call to the control API. */
export async function api<T = any>(stack: Stack, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const isRaw = Buffer.isBuffer(body);
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && !isRaw ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : isRaw ? (body as Buffer) : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** GET from the sandbox's read API. */
export async function sandbox<T = any>(stack: Stack, path: string): Promise<T> {
  const res = await fetch(`${stack.sandboxUrl}${path}`);
  if (!res.ok) throw new Error(`sandbox ${path} → ${res.status}`);
  return (await res.json()) as T;
}
