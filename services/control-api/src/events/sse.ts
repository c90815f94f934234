import type { AccountEvent, DirectoryEvent, RunEvent } from './run-event-hub.js';

/** One `run` event in Server-Sent Events framing; `id` is the run_events id (Last-Event-ID). */
export function formatRunEvent(e: RunEvent): string {
  const data = { runId: e.runId, campaignId: e.campaignId, status: e.status, counts: e.counts, title: e.title, body: e.body };
  // JSON.stringify never emits a raw newline, so the data fits on one `data:` line.
  return `id: ${e.id}\nevent: run\ndata: ${JSON.stringify(data)}\n\n`;
}

/** `{accountId, status}`, plus `reason` and `until` when it begins cooling; no id: not replayed. */
export function formatAccountEvent(e: AccountEvent): string {
  const data = {
    accountId: e.accountId,
    status: e.status,
    ...(e.reason !== undefined && { reason: e.reason }),
    ...(e.until !== undefined && { until: e.until }),
  };
  return `event: account\ndata: ${JSON.stringify(data)}\n\n`;
}

/** *(extension)* `{accountId, status, synced, size, until, reason}`; no id: not replayed. */
export function formatDirectoryEvent(e: DirectoryEvent): string {
  const data = { accountId: e.accountId, status: e.status, synced: e.synced, size: e.size, until: e.until ?? null, reason: e.reason ?? null };
  return `event: directory\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A comment line: keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT = ': heartbeat\n\n';

/** Parses a Last-Event-ID header; null when absent or not an event id we issued. */
export function parseLastEventId(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return null;
  return Number(value.trim());
}
