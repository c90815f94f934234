// Pieces shared by the pages: status pills, the run's explanation, its commands.
import { useState } from 'preact/hooks';
import { api, ApiError, type Run, type RunCommand } from './api.js';
import { duration, label, startLag, time } from './format.js';

export function Pill({ status }: { status: string }) {
  return <span class={`pill pill-${status}`}>{label(status)}</span>;
}

/** Why the run is where it is: the API's waiting sentence, or its summary when nothing holds it. */
export function Explanation({ run }: { run: Run }) {
  if (run.waiting) {
    return (
      <p class="waiting">
        <span class="reason">{run.waiting.reason.replace(/_/g, ' ')}</span> {run.waiting.detail}
        {run.waiting.until && <span class="until"> (until {time(run.waiting.until)})</span>}
      </p>
    );
  }
  if (run.errorSummary) return <p class="summary">{run.errorSummary}</p>;
  if (run.status === 'paused' && run.pausedReason === 'operator') return <p class="summary">Paused by an operator.</p>;
  return null;
}

export function Eta({ run }: { run: Run }) {
  if (run.eta)
    return (
      <span>
        {time(run.eta)} (in {duration(new Date(run.eta).getTime() - Date.now())})
      </span>
    );
  return <span>—</span>;
}

/** A run's start lag, window end and ETA, as entries of a `<dl class="facts">` (Activity and Run share them). */
export function TimingFacts({ run }: { run: Run }) {
  return (
    <>
      <div>
        <dt>Start lag</dt>
        <dd>{startLag(run) ?? 'not started'}</dd>
      </div>
      <div>
        <dt>Window ends</dt>
        <dd>{time(run.windowEndAt)}</dd>
      </div>
      <div>
        <dt>ETA</dt>
        <dd>
          <Eta run={run} />
        </dd>
      </div>
    </>
  );
}

const finished = ['success', 'partial', 'failed', 'cancelled'];

/** The commands a run's state allows, as real buttons; cancelling asks first. */
export function RunActions({ run, onChange }: { run: Run; onChange: (r: Run) => void }) {
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const act = async (command: RunCommand) => {
    setBusy(true);
    setError(null);
    try {
      onChange(await api.command(run.id, command));
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };
  const retriable = finished.includes(run.status) && run.counts.failed + run.counts.unknown > 0;
  const open = ['queued', 'running', 'paused'].includes(run.status);
  if (confirming) {
    return (
      <div class="actions" role="group" aria-label="Confirm cancel">
        <span>Cancel this run? Its {run.counts.pending} pending chats will be skipped.</span>
        <button type="button" class="danger" disabled={busy} onClick={() => void act('cancel')}>
          Yes, cancel run
        </button>
        <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
          Keep it
        </button>
      </div>
    );
  }
  return (
    <div class="actions">
      {run.status === 'paused' && (
        <button type="button" class="primary" disabled={busy} onClick={() => void act('resume')}>
          Resume
        </button>
      )}
      {(run.status === 'queued' || run.status === 'running') && (
        <button type="button" disabled={busy} onClick={() => void act('pause')}>
          Pause
        </button>
      )}
      {open && (
        <button type="button" disabled={busy} onClick={() => setConfirming(true)}>
          Cancel
        </button>
      )}
      {retriable && (
        <button type="button" disabled={busy} onClick={() => void act('retry-failed')}>
          Retry failed
        </button>
      )}
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

export function Progress({ run }: { run: Run }) {
  const c = run.counts;
  const pct = c.total ? Math.round((c.sent / c.total) * 100) : 0;
  return (
    <div class="progress">
      <progress max={c.total || 1} value={c.sent} aria-label={`${c.sent} of ${c.total} sent`} />
      <span>
        {c.sent} of {c.total} sent ({pct}%)
        {c.failed > 0 && <span class="bad"> · {c.failed} failed</span>}
        {c.unknown > 0 && <span class="warn"> · {c.unknown} unknown</span>}
        {/* receipts: only where the platform told some (telegram bots tell none) */}
        {c.sent > 0 && c.delivered + c.read > 0 && (
          <span class="receipts">
            {' '}
            · {Math.round((c.delivered / c.sent) * 100)}% delivered · {Math.round((c.read / c.sent) * 100)}% read
          </span>
        )}
        {c.replied > 0 && <span> · {c.replied} replied</span>}
      </span>
    </div>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const text =
    error instanceof ApiError && error.status === 404
      ? 'Not found: it does not exist, or it is not yours to see.'
      : error instanceof Error
        ? error.message
        : String(error);
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

/** A page's record not here yet: "Loading…", or once its fetch failed, "<what> not found" with the reason and a way back. */
export function NotLoaded({ what, error, back }: { what: string; error: unknown; back?: { href: string; label: string } }) {
  if (!error) return <p>Loading…</p>;
  return (
    <section>
      <h1>{what} not found</h1>
      <ErrorNote error={error} />
      {back && <a href={back.href}>{back.label}</a>}
    </section>
  );
}

/** Previous / next over a cursor-paged list: `cursors` holds the cursor of every page so far. */
export function Pager({
  noun,
  cursors,
  setCursors,
  nextCursor,
}: {
  noun: string;
  cursors: (string | undefined)[];
  setCursors: (f: (c: (string | undefined)[]) => (string | undefined)[]) => void;
  nextCursor: string | null | undefined;
}) {
  return (
    <div class="pager">
      <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
        Previous {noun}
      </button>
      <span class="muted">Page {cursors.length}</span>
      <button type="button" disabled={!nextCursor} onClick={() => nextCursor && setCursors((c) => [...c, nextCursor])}>
        Next {noun}
      </button>
    </div>
  );
}
