// The next runs of a campaign as the API works them out (stored, or previewed in the form).
import type { ComponentChildren } from 'preact';
import type { CampaignPreview, Occurrence } from './api.js';
import { duration, relative, zonedTime } from './format.js';

/** The next runs the scheduler will create, as the API works them out; a start held back to the window's opening says so. */
export function NextOccurrences({ items, zone }: { items: Occurrence[] | null; zone: string }) {
  if (items === null) return <p>Loading…</p>;
  if (items.length === 0) return <p class="occurrences-none">None: the campaign is inactive, or its schedule has no run left.</p>;
  return (
    <ol class="occurrences" aria-label={`Next runs, times in ${zone}`}>
      {items.map((o) => (
        <li>
          {zonedTime(o.startsAt, zone)} <span class="muted">({relative(o.startsAt)})</span>
          {o.startsAt !== o.scheduledAt && <span class="muted"> · scheduled {zonedTime(o.scheduledAt, zone)}, held to the window's opening</span>}
          {o.windowEndAt && <span class="muted"> · window closes {zonedTime(o.windowEndAt, zone)}</span>}
        </li>
      ))}
    </ol>
  );
}

/** What the form's campaign would do: one run's length at the account's pace, whether it fits its window, its next runs; `children` after them (the message as one chat gets it). */
export function PreviewNote({ preview, zone, children }: { preview: CampaignPreview; zone: string; children?: ComponentChildren }) {
  const r = preview.run;
  return (
    <section class="preview" aria-labelledby="preview-title" tabIndex={-1} id="preview">
      <h2 id="preview-title">Preview</h2>
      <p>
        <span class={`pill ${r.fitsWindow ? 'pill-success' : 'pill-paused'}`}>{r.fitsWindow ? 'Fits the window' : 'Does not fit the window'}</span> {r.targets}{' '}
        chats, about {duration(r.durationSeconds * 1000)} a run at {r.pacedPerMinute}/min.
      </p>
      <p class="preview-detail">{r.detail}</p>
      <h3>Next occurrences ({zone})</h3>
      <NextOccurrences items={preview.occurrences} zone={zone} />
      {children}
    </section>
  );
}
