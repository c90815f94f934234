import { randomBytes } from 'node:crypto';
import { eventually } from './eventually.js';
import { startPrismProxy, type PrismProxy } from './prism-proxy.js';
import { startService, type ServiceProcess } from './processes.js';

export interface Stack {
  apiUrl: string;
  sandboxUrl: string;
  adminToken: string;
  services: ServiceProcess[];
  scheduler: ServiceProcess;
  senders: ServiceProcess[];
  senderMetricsPorts: number[];
  schedulerMetricsPort: number;
  /** SIGTERM to every service; throws when one does not exit cleanly */
  stop(): Promise<void>;
}

export interface StackOptions {
  databaseUrl: string;
  redisUrl: string;
  keyPrefix: string;
  senders?: number;
  env?: Record<string, string>;
  apiEnv?: Record<string, string>;
  schedulerEnv?: Record<string, string>;
  senderEnv?: Record<string, string>;
  sandboxEnv?: Record<string, string>;
  /** a sandbox already running (e.g. one kept from a stack whose other services were stopped): none is started */
  sandboxUrl?: string;
  /** apiUrl through Stoplight Prism's validating proxy; stop() throws on any answer the OpenAPI document does not describe, or request it does not describe that the API accepted */
  prism?: boolean;
}

/** The whole of Metronome as separate processes from the build output (sandbox, API, scheduler, N senders), for e2e and bench. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const adminToken = `adm_${randomBytes(12).toString('hex')}`;
  const common = { DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl, KEY_PREFIX: options.keyPrefix, ...options.env };
  const services: ServiceProcess[] = [];
  let prism: PrismProxy | undefined;
  let prismStart: Promise<PrismProxy> | undefined;
  try {
    // Port 0, read from the services' `listening` lines: a port picked free beforehand can be taken before the service binds it.
    const sandbox = options.sandboxUrl
      ? null
      : startService('sandbox', 'services/sandbox/dist/main.js', { ...common, SANDBOX_PORT: '0', ...options.sandboxEnv });
    if (sandbox) services.push(sandbox);
    const api = startService('api', 'services/control-api/dist/server.js', {
      ...common,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_TOKEN: adminToken,
      MIN_INTERVAL_SECONDS: '1',
      ...options.apiEnv,
    });
    services.push(api);
    const sandboxPort = sandbox
      ? Number((await sandbox.waitForLog((l) => l['msg'] === 'sandbox listening'))['port'])
      : Number(new URL(options.sandboxUrl!).port);
    const scheduler = startService('scheduler', 'services/scheduler/dist/main.js', {
      ...common,
      METRICS_PORT: '0',
      // the production default: instant starts come by the API's nudge, later ones by the lookahead
      SCHEDULER_TICK_MS: '1000',
      ...options.schedulerEnv,
    });
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
    // Prism (seconds to start) starts once the API listens, beside the senders' and scheduler's start-up
    const listening = api.waitForLog((l) => l['msg'] === 'control-api listening').then((l) => String(l['url']));
    listening.catch(() => undefined); // awaited after the senders' start
    prismStart = options.prism ? listening.then((url) => startPrismProxy(url)) : undefined;
    prismStart?.then((p) => (prism = p)).catch(() => undefined);
    const ready = await Promise.all(senders.map((s) => s.waitForLog((l) => l['msg'] === 'sender ready')));
    const schedulerReady = await scheduler.waitForLog((l) => l['msg'] === 'scheduler ready');
    const directApiUrl = await listening;
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    await eventually('the API to be ready', async () => (await fetch(`${directApiUrl}/readyz`)).ok, 20_000);
    await eventually('the sandbox to answer', async () => (await fetch(`${sandboxUrl}/healthz`)).ok, 20_000);
    prism = await prismStart;
    const apiUrl = prism?.url ?? directApiUrl;
    return {
      apiUrl,
      sandboxUrl,
      adminToken,
      services,
      scheduler,
      senders,
      senderMetricsPorts: ready.map((l) => Number(l['metricsPort'])),
      schedulerMetricsPort: Number(schedulerReady['metricsPort']),
      stop: async () => {
        const codes = await Promise.all(services.map((s) => s.stop()));
        await prism?.stop();
        const failed = services.filter((_, i) => codes[i] !== 0 && codes[i] !== null);
        if (failed.length) throw new Error(`services did not exit cleanly on SIGTERM: ${failed.map((s) => s.name).join(', ')}`);
        const violations = prism?.mismatches() ?? [];
        if (violations.length)
          throw new Error(
            `the API and its OpenAPI document disagree (Prism):\n${violations.map((v) => `${v.request} → ${v.status}: ${v.message}`).join('\n')}`,
          );
      },
    };
  } catch (error) {
    // a Prism still starting is stopped once it is up
    await prismStart?.catch(() => undefined);
    await prism?.stop();
    await Promise.all(services.map((s) => s.stop('SIGKILL')));
    throw error;
  }
}

/** A JSON (or raw Buffer) call to the control API; the answer parsed. */
export async function apiCall<T = any>(
  apiUrl: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const isRaw = Buffer.isBuffer(body);
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && !isRaw ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : isRaw ? (body as Buffer) : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

export async function sandboxGet<T = any>(sandboxUrl: string, path: string): Promise<T> {
  const res = await fetch(`${sandboxUrl}${path}`);
  if (!res.ok) throw new Error(`sandbox ${path} → ${res.status}`);
  return (await res.json()) as T;
}

/** The sum of a Prometheus series' samples whose labels include `labels` (e.g. `trigger="schedule"`). */
export async function scrapeSum(url: string, metric: string, labels = ''): Promise<number> {
  const text = await (await fetch(url)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const m = /^(\S+?)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== metric) continue;
    if (labels && !(m[2] ?? '').includes(labels)) continue;
    sum += Number(m[3]);
  }
  return sum;
}
