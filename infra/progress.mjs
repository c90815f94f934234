// `npm start`'s live progress: a line when a run changes status, at most one every 5 s while it
// sends, and a heartbeat when nothing changed for 30 s. Each line's counts add up to the run's
// total: "23/50 sent, 2 in flight, 25 pending" — every target is in exactly one of them.

const PROGRESS_EVERY_MS = 5_000;
const HEARTBEAT_EVERY_MS = 30_000;
const clock = (at = new Date()) => at.toISOString().slice(11, 19);

/** "23/50 sent, 2 in flight, 25 pending": sent of total, then every other non-zero count. */
export function countsInWords(c) {
  const rest = [
    [c.inFlight, 'in flight'],
    [c.pending, 'pending'],
    [c.failed, 'failed'],
    [c.unknown, 'unknown'],
    [c.skipped, 'skipped'],
  ]
    .filter(([n]) => n > 0)
    .map(([n, label]) => `${n} ${label}`);
  return [`${c.sent}/${c.total} sent`, ...rest].join(', ');
}

/** One progress line for a run. */
export function runLine(run, campaignName) {
  const lag = run.startedAt ? `  start lag ${((Date.parse(run.startedAt) - Date.parse(run.scheduledAt)) / 1000).toFixed(2)} s` : '';
  const why = run.errorSummary ?? run.waiting?.detail;
  return `${clock()}  run ${run.id.slice(0, 8)}  ${campaignName.padEnd(36)} ${run.status.padEnd(9)} ${countsInWords(run.counts)}${lag}${why ? `  — ${why}` : ''}`;
}

/** Polls the demo tenant's runs each second and prints what changed; returns a stop function. */
export function watchRuns({ apiUrl, token, campaigns, say }) {
  const seen = new Map();
  let lastLineAt = Date.now();
  let stopped = false;
  const get = async (url) => {
    const res = await fetch(`${apiUrl}${url}`, { headers: { authorization: `Bearer ${token}` } });
    return res.ok ? res.json() : null;
  };
  const heartbeat = async () => {
    const page = await get('/v1/campaigns?limit=50');
    const next = (page?.items ?? []).filter((c) => campaigns.has(c.id) && c.nextRunAt).sort((a, b) => Date.parse(a.nextRunAt) - Date.parse(b.nextRunAt))[0];
    say(`${clock()}  · all quiet${next ? `; next run: "${next.name}" at ${clock(new Date(next.nextRunAt))}` : ''}`);
  };
  const tick = async () => {
    if (stopped) return;
    try {
      const page = await get('/v1/runs?limit=10');
      for (const run of (page?.items ?? []).slice().reverse()) {
        if (!campaigns.has(run.campaignId)) continue;
        const counts = countsInWords(run.counts);
        const last = seen.get(run.id);
        const changed = !last || last.status !== run.status || last.counts !== counts;
        if (!changed || (last && last.status === run.status && Date.now() - last.at < PROGRESS_EVERY_MS)) continue;
        seen.set(run.id, { status: run.status, counts, at: Date.now() });
        say(runLine(run, campaigns.get(run.campaignId)));
        lastLineAt = Date.now();
      }
      if (Date.now() - lastLineAt >= HEARTBEAT_EVERY_MS) {
        await heartbeat();
        lastLineAt = Date.now();
      }
    } catch {
      // the API is restarting or stopping; the next poll tells
    }
    if (!stopped) setTimeout(tick, 1000);
  };
  tick();
  return () => {
    stopped = true;
  };
}
