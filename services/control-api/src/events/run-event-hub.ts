import { notificationFor, type RunCountsLike } from '@metronome/core';
import { countRuns, type AccountStatus, type DB, type RunControlRepository, type RunEventRow, type RunStatus } from '@metronome/db';
import type { Logger } from '@metronome/observability';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { nextEvents, startOrder, type EventOrder } from './event-order.js';

/** The channel account and directory changes are notified on (migrations/0003, 0012, 0016). */
export const RUN_EVENTS_CHANNEL = 'metronome_run_events';

export const RUN_EVENTS_POLL_MS = 250;
const POLL_LIMIT = 1_000;

export interface RunEvent {
  id: number;
  tenantId: string;
  runId: string;
  campaignId: string;
  status: RunStatus;
  counts: RunCountsLike;
  title: string;
  body: string;
}

/** An account status change (notified on the same channel, migrations/0003). */
export interface AccountEvent {
  tenantId: string;
  accountId: string;
  status: AccountStatus;
  /** *(extension)* on `cooling`: why and until when */
  reason?: string;
  until?: string;
}

/** *(extension)* A chat directory sync's progress (migrations/0016 notifies it on the same channel). */
export interface DirectoryEvent {
  tenantId: string;
  accountId: string;
  status: string;
  synced: number;
  size: number;
  until?: string;
  reason?: string;
}

export interface Subscriber {
  tenantId: string | null;
  send(event: RunEvent): void;
  sendAccount?(event: AccountEvent): void;
  sendDirectory?(event: DirectoryEvent): void;
  end(): void;
}

export interface RunEventHubOptions {
  databaseUrl: string;
  db: Kysely<DB>;
  runs: RunControlRepository;
  logger: Logger;
  reconnectDelayMs?: number;
  pollMs?: number;
}

/**
 * Fans run, account and directory changes out to SSE subscribers. Run changes are polled from run_events in id order: a NOTIFY
 * in each run's transaction would serialise every sender's commits on PostgreSQL's notify lock (bench/results/HISTORY.md,
 * "Start lag at 10,000 campaigns"). Account and directory changes come by NOTIFY on one dedicated connection per replica.
 */
export class RunEventHub {
  private readonly subscribers = new Set<Subscriber>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private order: EventOrder | null = null;
  private starting: Promise<void> | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private polling: Promise<void> = Promise.resolve();

  constructor(private readonly opts: RunEventHubOptions) {}

  async subscribe(subscriber: Subscriber): Promise<() => void> {
    if (this.closed) throw new Error('event hub closed');
    await this.ensureListening();
    // counted first: a read finding nobody would stop the reading, leaving this subscriber unread
    this.subscribers.add(subscriber);
    try {
      await this.ensureReading();
    } catch (err) {
      this.subscribers.delete(subscriber);
      throw err;
    }
    return () => this.subscribers.delete(subscriber);
  }

  /** Events after `afterId` (a client's Last-Event-ID) from run_events, oldest first. */
  async replay(afterId: number, tenantId: string | null, limit: number): Promise<RunEvent[]> {
    const rows = await this.opts.runs.eventsAfter(afterId, tenantId, limit);
    const counts = await countRuns(this.opts.db, [...new Set(rows.map((r) => r.runId))]);
    return rows.map((r) => dress(r, r.campaignName, r.campaignId, counts.get(r.runId)));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.pollTimer) clearTimeout(this.pollTimer);
    for (const s of this.subscribers) s.end();
    this.subscribers.clear();
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    await this.starting?.catch(() => undefined);
    await this.polling;
  }

  private ensureListening(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.opts.databaseUrl, application_name: 'metronome-api-events' });
    client.on('notification', (msg) => this.onNotification(msg.payload));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    await client.connect();
    await client.query(`listen ${RUN_EVENTS_CHANNEL}`);
    if (this.closed) {
      await client.end();
      return;
    }
    this.client = client;
  }

  private ensureReading(): Promise<void> {
    if (this.order) return Promise.resolve();
    this.starting ??= this.opts.runs
      .lastEventId()
      .then((lastId) => {
        this.order = startOrder(lastId);
        this.schedulePoll();
      })
      .finally(() => {
        this.starting = null;
      });
    return this.starting;
  }

  private schedulePoll(): void {
    if (this.closed || this.pollTimer || !this.order) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = null;
      this.polling = this.poll().finally(() => this.schedulePoll());
    }, this.opts.pollMs ?? RUN_EVENTS_POLL_MS);
    this.pollTimer.unref();
  }

  private async poll(): Promise<void> {
    const order = this.order;
    if (!order || this.closed) return;
    if (this.subscribers.size === 0) {
      this.order = null;
      return;
    }
    try {
      const rows = await this.opts.runs.eventsAfter(order.lastId, null, POLL_LIMIT, [...order.late.keys()]);
      const next = nextEvents(
        order,
        rows.filter((r) => r.id > order.lastId).map((r) => r.id),
        rows.filter((r) => order.late.has(r.id)).map((r) => r.id),
        Date.now(),
      );
      if (this.order === order) this.order = next.order;
      const byId = new Map(rows.map((r) => [r.id, r]));
      await this.deliver(next.ids.map((id) => byId.get(id)!));
    } catch (err) {
      this.opts.logger.warn({ err }, 'could not read run events; trying again');
    }
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.opts.logger.warn({ err }, 'events connection lost; reconnecting');
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureListening().catch((err: unknown) => {
        this.opts.logger.warn({ err }, 'events reconnect failed');
        this.scheduleReconnect();
      });
    }, this.opts.reconnectDelayMs ?? 1000);
    this.reconnectTimer.unref();
  }

  private onNotification(payload: string | undefined): void {
    const directory = parseDirectoryNotice(payload);
    if (directory) {
      for (const s of this.subscribers) if (s.sendDirectory && (s.tenantId === null || s.tenantId === directory.tenantId)) s.sendDirectory(directory);
      return;
    }
    const account = parseAccountNotice(payload);
    if (account) {
      // Nothing to dress and no replay id: account events go out as they come.
      for (const s of this.subscribers) if (s.sendAccount && (s.tenantId === null || s.tenantId === account.tenantId)) s.sendAccount(account);
      return;
    }
    this.opts.logger.warn({ payload }, 'unreadable event notification');
  }

  private async deliver(batch: RunEventRow[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      const counts = await countRuns(this.opts.db, [...new Set(batch.map((n) => n.runId))]);
      for (const n of batch) {
        const event = dress(n, n.campaignName, n.campaignId, counts.get(n.runId));
        for (const s of this.subscribers) if (s.tenantId === null || s.tenantId === event.tenantId) s.send(event);
      }
    } catch (err) {
      this.opts.logger.warn({ err, events: batch.length }, 'could not deliver run events');
    }
  }
}

function dress(
  n: Pick<RunEventRow, 'id' | 'runId' | 'tenantId' | 'status'>,
  campaignName: string,
  campaignId: string,
  counts: RunEvent['counts'] | undefined,
): RunEvent {
  const c = counts ?? { total: 0, pending: 0, inFlight: 0, sent: 0, failed: 0, skipped: 0, unknown: 0 };
  const { title, body } = notificationFor(n.status, c, campaignName);
  return { id: n.id, tenantId: n.tenantId, runId: n.runId, campaignId, status: n.status, counts: c, title, body };
}

function parseAccountNotice(payload: string | undefined): AccountEvent | null {
  try {
    const v = JSON.parse(payload ?? '') as Record<string, unknown>;
    if (v['type'] !== 'account' || typeof v['accountId'] !== 'string' || typeof v['tenantId'] !== 'string' || typeof v['status'] !== 'string') return null;
    return {
      tenantId: v['tenantId'],
      accountId: v['accountId'],
      status: v['status'] as AccountStatus,
      ...(typeof v['reason'] === 'string' && { reason: v['reason'] }),
      ...(typeof v['until'] === 'string' && { until: v['until'] }),
    };
  } catch {
    return null;
  }
}

function parseDirectoryNotice(payload: string | undefined): DirectoryEvent | null {
  try {
    const v = JSON.parse(payload ?? '') as Record<string, unknown>;
    if (v['type'] !== 'directory' || typeof v['accountId'] !== 'string' || typeof v['tenantId'] !== 'string' || typeof v['status'] !== 'string') return null;
    return {
      tenantId: v['tenantId'],
      accountId: v['accountId'],
      status: v['status'],
      synced: typeof v['synced'] === 'number' ? v['synced'] : 0,
      size: typeof v['size'] === 'number' ? v['size'] : 0,
      ...(typeof v['until'] === 'string' && { until: v['until'] }),
      ...(typeof v['reason'] === 'string' && { reason: v['reason'] }),
    };
  } catch {
    return null;
  }
}
