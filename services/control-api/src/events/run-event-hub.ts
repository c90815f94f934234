import { notificationFor, type RunCountsLike } from '@metronome/core';
import { countRuns, type AccountStatus, type DB, type RunControlRepository, type RunStatus } from '@metronome/db';
import type { Logger } from '@metronome/observability';
import type { Kysely } from 'kysely';
import pg from 'pg';

/** The channel migrations/0001_init.sql notifies on every run status change. */
export const RUN_EVENTS_CHANNEL = 'metronome_run_events';

/** One status change as /v1/events sends it. */
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

/** An account status change (migrations/0003_whatsapp.sql notifies it on the same channel). */
export interface AccountEvent {
  tenantId: string;
  accountId: string;
  status: AccountStatus;
  /** *(extension)* on `cooling`: why (flood_waits, failures) and until when (migrations/0012) */
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
  /** null: every tenant (the operator) */
  tenantId: string | null;
  send(event: RunEvent): void;
  /** account status changes, for subscribers that want them */
  sendAccount?(event: AccountEvent): void;
  /** chat directory sync progress, for subscribers that want it */
  sendDirectory?(event: DirectoryEvent): void;
  /** the hub is closing: end the stream */
  end(): void;
}

interface Notice {
  id: number;
  runId: string;
  tenantId: string;
  status: RunStatus;
}

export interface RunEventHubOptions {
  databaseUrl: string;
  db: Kysely<DB>;
  runs: RunControlRepository;
  logger: Logger;
  reconnectDelayMs?: number;
}

/**
 * Fans PostgreSQL NOTIFYs of run status changes out to SSE subscribers. One dedicated
 * connection per API replica LISTENs (a pooled connection would lose the LISTEN when it is
 * handed back), so every replica sees every change whoever made it. Each notice is dressed
 * once (campaign, counts, notification texts), whatever the number of subscribers. After a
 * lost connection the hub reconnects and replays what it missed from run_events.
 */
export class RunEventHub {
  private readonly subscribers = new Set<Subscriber>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** highest event id handed to subscribers; replays after a reconnect start here */
  private lastId = 0;
  private queue: Notice[] = [];
  private draining: Promise<void> = Promise.resolve();

  constructor(private readonly opts: RunEventHubOptions) {}

  /** Adds a subscriber once the LISTEN is in place; returns its unsubscribe. */
  async subscribe(subscriber: Subscriber): Promise<() => void> {
    if (this.closed) throw new Error('event hub closed');
    await this.ensureListening();
    this.subscribers.add(subscriber);
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
    for (const s of this.subscribers) s.end();
    this.subscribers.clear();
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    await this.draining;
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
    const resumed = this.lastId > 0;
    this.client = client;
    // Changes made while the connection was down were not notified; run_events has them.
    if (resumed) this.enqueueBackfill();
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.opts.logger.warn({ err }, 'run events connection lost; reconnecting');
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureListening().catch((err: unknown) => {
        this.opts.logger.warn({ err }, 'run events reconnect failed');
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
    const notice = parseNotice(payload);
    if (!notice) {
      this.opts.logger.warn({ payload }, 'unreadable run event notification');
      return;
    }
    this.queue.push(notice);
    // One batch at a time keeps events in notification order and dresses bursts together.
    this.draining = this.draining.then(() => this.drain());
  }

  private enqueueBackfill(): void {
    this.draining = this.draining
      .then(async () => {
        const missed = await this.opts.runs.eventsAfter(this.lastId, null, 10_000);
        this.queue.push(...missed.map((e) => ({ id: e.id, runId: e.runId, tenantId: e.tenantId, status: e.status })));
        await this.drain();
      })
      .catch((err: unknown) => this.opts.logger.warn({ err }, 'run events backfill failed'));
  }

  private async drain(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    for (const n of batch) this.lastId = Math.max(this.lastId, n.id);
    if (this.subscribers.size === 0) return;
    try {
      const runIds = [...new Set(batch.map((n) => n.runId))];
      const [campaigns, counts] = await Promise.all([this.opts.runs.campaignsOfRuns(runIds), countRuns(this.opts.db, runIds)]);
      for (const n of batch) {
        const campaign = campaigns.get(n.runId);
        if (!campaign) continue; // the run is gone (deleted with its rows)
        const event = dress(n, campaign.campaignName, campaign.campaignId, counts.get(n.runId));
        for (const s of this.subscribers) if (s.tenantId === null || s.tenantId === event.tenantId) s.send(event);
      }
    } catch (err) {
      this.opts.logger.warn({ err, events: batch.length }, 'could not deliver run events');
    }
  }
}

function dress(n: Notice, campaignName: string, campaignId: string, counts: RunEvent['counts'] | undefined): RunEvent {
  const c = counts ?? { total: 0, pending: 0, inFlight: 0, sent: 0, failed: 0, skipped: 0, unknown: 0 };
  const { title, body } = notificationFor(n.status, c, campaignName);
  return { id: n.id, tenantId: n.tenantId, runId: n.runId, campaignId, status: n.status, counts: c, title, body };
}

function parseNotice(payload: string | undefined): Notice | null {
  try {
    const v = JSON.parse(payload ?? '') as Partial<Record<keyof Notice, unknown>>;
    if (typeof v.id !== 'number' || typeof v.runId !== 'string' || typeof v.tenantId !== 'string' || typeof v.status !== 'string') return null;
    return { id: v.id, runId: v.runId, tenantId: v.tenantId, status: v.status as RunStatus };
  } catch {
    return null;
  }
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
