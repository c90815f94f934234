// The next runs of a campaign as the API works them out (stored, or previewed in the form).
import type { CampaignPreview, Occurrence } from './api.js';
import { duration, relative, time } from './format.js';

/** The next runs the scheduler will create, as the API works them out; a start held back to the window's opening says so. */
export function NextOccurrences({ items }: { items: Occurrence[] | null }) {
  if (items === null) return <p>Loading…</p>;
  if (items.length === 0) return <p class="occurrences-none">None: the campaign is inactive, or its schedule has no run left.</p>;
  return (
    <ol class="occurrences">
      {items.map((o) => (
        <li>
          {time(o.startsAt)} <span class="muted">({relative(o.startsAt)})</span>
          {o.startsAt !== o.scheduledAt && <span class="muted"> · scheduled {time(o.scheduledAt)}, held to the window's opening</span>}
          {o.windowEndAt && <span class="muted"> · window closes {time(o.windowEndAt)}</span>}
        </li>
      ))}
    </ol>
  );
}

/** What the form's campaign would do: one run's length at the account's pace, whether it fits its window, its next runs. */
export function PreviewNote({ preview }: { preview: CampaignPreview }) {
  const r = preview.run;
  return (
    <section class="preview" aria-labelledby="preview-title" tabIndex={-1} id="preview">
      <h2 id="preview-title">Preview</h2>
      <p>
        <span class={`pill ${r.fitsWindow ? 'pill-success' : 'pill-paused'}`}>{r.fitsWindow ? 'Fits the window' : 'Does not fit the window'}</span>{' '}
        {r.targets} chats, about {duration(r.durationSeconds * 1000)} a run at {r.pacedPerMinute}/min.
      </p>
      <p class="preview-detail">{r.detail}</p>
      <h3>Next occurrences</h3>
      <NextOccurrences items={preview.occurrences} />
    </section>
  );
}
