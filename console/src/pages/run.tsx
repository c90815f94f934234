// One run: its summary, why it is where it is, and its chats page by page (CSV of them all).
import { useState } from 'preact/hooks';
import { allPages, api, type Run, type RunTarget, type TargetStatus } from '../api.js';
import { ErrorNote, Explanation, NotLoaded, Pill, Progress, RunActions, TimingFacts } from '../components.js';
import { label, time } from '../format.js';
import { useLive, useNames } from '../hooks.js';
import { href } from '../router.js';
import { downloadCsv } from '../csv.js';
import { targetsCsv } from '../run-csv.js';
import { Outside } from '../outside-text.js';

const TARGET_STATUSES: TargetStatus[] = ['pending', 'in_flight', 'sent', 'failed', 'skipped', 'unknown'];
const PAGE = 50;
/** The receipts filter: what the platform told of each chat (CONTRACT §3, "Receipts and replies"). */
const RECEIPT_FILTERS = {
  '': {},
  delivered: { delivered: 'true' },
  undelivered: { delivered: 'false' },
  read: { read: 'true' },
  unread: { read: 'false' },
  replied: { replied: 'true' },
} as const;
type ReceiptFilter = keyof typeof RECEIPT_FILTERS;
const RECEIPT_LABELS: Record<ReceiptFilter, string> = {
  '': 'All',
  delivered: 'Delivered',
  undelivered: 'Not delivered',
  read: 'Read',
  unread: 'Not read',
  replied: 'Replied',
};

/** A receipt's cell: a group's members out of its size, else the time. */
function receiptCell(at: string | null, members: number | null, of: number | null): string {
  if (members !== null) return of !== null ? `${members}/${of}` : String(members);
  return at ? time(at) : '—';
}

/** A chat by its title (the directory's, else its `name`) with its id beside it, or by its id alone. */
function ChatCell({ target: t }: { target: RunTarget }) {
  if (t.title === null) return <Outside>{t.chatId}</Outside>;
  return (
    <>
      <Outside>{t.title}</Outside>{' '}
      <span class="muted mono">
        <Outside>{t.chatId}</Outside>
      </span>
    </>
  );
}

export function RunPage({ id }: { id: string }) {
  const names = useNames();
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<TargetStatus | ''>('');
  const [receipt, setReceipt] = useState<ReceiptFilter>('');
  // cursors of the pages before the current one, and the current page's own
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<{ items: RunTarget[]; nextCursor: string | null } | null>(null);
  const [exporting, setExporting] = useState(false);
  const cursor = cursors[cursors.length - 1];

  const reload = async (current: () => boolean) => {
    try {
      const [r, p] = await Promise.all([api.run(id), api.targets(id, { status, ...RECEIPT_FILTERS[receipt], limit: PAGE, cursor })]);
      if (!current()) return;
      setRun(r);
      setPage(p);
      setError(null);
    } catch (e) {
      if (current()) setError(e);
    }
  };
  useLive(reload, (e) => 'runId' in e && e.runId === id, [id, status, receipt, cursor]);

  const exportCsv = async () => {
    setExporting(true);
    setError(null);
    try {
      const all = await allPages((c) => api.targets(id, { status, ...RECEIPT_FILTERS[receipt], limit: 500, cursor: c }), 1000);
      downloadCsv(`run-${id}${status ? `-${status}` : ''}${receipt ? `-${receipt}` : ''}.csv`, targetsCsv(all));
    } catch (e) {
      setError(e);
    } finally {
      setExporting(false);
    }
  };

  if (!run) return <NotLoaded what="Run" error={error} back={{ href: href.activity(), label: 'Back to Activity' }} />;
  const campaign = names.campaigns.get(run.campaignId);
  return (
    <section aria-labelledby="run-title">
      <p>
        <a href={href.activity()}>← Activity</a>
      </p>
      <h1 id="run-title">
        <Pill status={run.status} /> {campaign ? campaign.name : 'Run'} <span class="muted">{run.id.slice(0, 8)}</span>
      </h1>
      <Progress run={run} />
      <dl class="facts">
        <div>
          <dt>Campaign</dt>
          <dd>{campaign ? <a href={href.campaign(campaign.id)}>{campaign.name}</a> : run.campaignId.slice(0, 8)}</dd>
        </div>
        <div>
          <dt>Account</dt>
          <dd>{names.accounts.get(run.accountId)?.name ?? run.accountId.slice(0, 8)}</dd>
        </div>
        <div>
          <dt>Scheduled</dt>
          <dd>{time(run.scheduledAt)}</dd>
        </div>
        <TimingFacts run={run} />
        <div>
          <dt>Finished</dt>
          <dd>{time(run.finishedAt)}</dd>
        </div>
      </dl>
      <Explanation run={run} />
      {run.waiting && run.errorSummary && <p class="summary">{run.errorSummary}</p>}
      <RunActions run={run} onChange={setRun} />

      <h2>Chats</h2>
      {run.historyPurgedAt && (
        <p class="summary" data-history-purged>
          History retention removed this run's chats on {time(run.historyPurgedAt)}; its counts, status and times remain.
        </p>
      )}
      <div class="filters">
        <label>
          Chat status
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as TargetStatus | '');
              setCursors([undefined]);
            }}
          >
            <option value="">All</option>
            {TARGET_STATUSES.map((s) => (
              <option value={s}>{label(s)}</option>
            ))}
          </select>
        </label>
        <label>
          Receipt
          <select
            value={receipt}
            onChange={(e) => {
              setReceipt(e.currentTarget.value as ReceiptFilter);
              setCursors([undefined]);
            }}
          >
            {(Object.keys(RECEIPT_LABELS) as ReceiptFilter[]).map((r) => (
              <option value={r}>{RECEIPT_LABELS[r]}</option>
            ))}
          </select>
        </label>
        <button type="button" disabled={exporting} onClick={() => void exportCsv()}>
          {exporting ? 'Exporting…' : 'Export CSV'}
        </button>
      </div>
      {/* a failed export or reload of a run already shown: said here, the table kept as it was */}
      <ErrorNote error={error} />
      <div class="table-wrap">
        <table class="targets">
          <thead>
            <tr>
              <th scope="col">Chat</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Waiting</th>
              <th scope="col">Error</th>
              <th scope="col">Delivered</th>
              <th scope="col">Read</th>
              <th scope="col">Replied</th>
            </tr>
          </thead>
          <tbody>
            {(page?.items ?? []).map((t) => (
              <tr>
                <td data-label="Chat">
                  <ChatCell target={t} />
                </td>
                <td data-label="Status">
                  <Pill status={t.status} />
                </td>
                <td data-label="Attempts">{t.attempts}</td>
                <td data-label="Next attempt">{t.status === 'pending' ? time(t.nextAttemptAt) : '—'}</td>
                <td data-label="Waiting">{t.waiting?.detail ?? '—'}</td>
                <td data-label="Error">
                  {t.error ? (
                    <>
                      {t.error.code}: <Outside>{t.error.message}</Outside>
                    </>
                  ) : (
                    '—'
                  )}
                </td>
                <td data-label="Delivered">{receiptCell(t.deliveredAt, t.deliveredTo, t.memberCount)}</td>
                <td data-label="Read">{receiptCell(t.readAt, t.readBy, t.memberCount)}</td>
                <td data-label="Replied">{t.repliedAt ? time(t.repliedAt) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Chat pages">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span>Page {cursors.length}</span>
        <button type="button" disabled={!page?.nextCursor} onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}>
          Next page
        </button>
      </nav>
    </section>
  );
}
