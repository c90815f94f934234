// The campaign form's schedule: how often it repeats (once, at an interval, on a cron), in which
// timezone, inside which delivery window. Inputs only: the form holds the draft.
import type { Draft, FieldId } from './campaign-draft.js';
import { invalidProps } from './field.js';

const zones = (): string[] => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return [];
  }
};

export type TextProps = (key: keyof Draft) => Record<string, unknown>;

/** The schedule's fieldset: repeats, its time or interval or cron, timezone and window. */
export function Schedule({
  draft,
  text,
  note,
  set,
  errors,
}: {
  draft: Draft;
  text: TextProps;
  note: (k: FieldId) => preact.JSX.Element;
  set: <K extends keyof Draft>(k: K) => (v: Draft[K]) => void;
  errors: Map<FieldId, string[]>;
}) {
  return (
    <fieldset>
      <legend>Schedule</legend>
      <div class="field">
        <label for="scheduleType">Repeats</label>
        <select
          id="scheduleType"
          value={draft.scheduleType}
          onChange={(e) => set('scheduleType')(e.currentTarget.value as Draft['scheduleType'])}
          {...invalidProps('scheduleType', errors.get('scheduleType'))}
        >
          <option value="once">Once</option>
          <option value="interval">At an interval</option>
          <option value="cron">On a cron schedule</option>
        </select>
        {note('scheduleType')}
      </div>
      {draft.scheduleType === 'once' && (
        <div class="field">
          <label for="at">At (in the campaign's timezone)</label>
          <input type="datetime-local" {...text('at')} />
          {note('at')}
        </div>
      )}
      {draft.scheduleType === 'interval' && (
        <div class="row">
          <div class="field">
            <label for="every">Every</label>
            <input type="number" min={1} inputMode="numeric" {...text('every')} />
            {note('every')}
          </div>
          <div class="field">
            <label for="everyUnit">Unit</label>
            <select id="everyUnit" value={draft.everyUnit} onChange={(e) => set('everyUnit')(e.currentTarget.value as Draft['everyUnit'])}>
              <option value="seconds">seconds</option>
              <option value="minutes">minutes</option>
              <option value="hours">hours</option>
            </select>
          </div>
        </div>
      )}
      {draft.scheduleType === 'interval' && (
        <div class="field">
          <label for="startAt">Starting (optional, in the campaign's timezone)</label>
          <input type="datetime-local" {...text('startAt')} />
          {note('startAt')}
        </div>
      )}
      {draft.scheduleType === 'cron' && (
        <div class="field">
          <label for="expression">Cron expression (five fields: minute hour day month weekday)</label>
          <input type="text" spellcheck={false} placeholder="0 9 * * 1-5" {...text('expression')} />
          {note('expression')}
        </div>
      )}
      <div class="field">
        <label for="timezone">Timezone</label>
        <input type="text" list="zones" autoComplete="off" {...text('timezone')} />
        <datalist id="zones">
          {zones().map((z) => (
            <option value={z} />
          ))}
        </datalist>
        {note('timezone')}
      </div>
      <div class="row">
        <div class="field">
          <label for="windowStart">Window opens (HH:MM)</label>
          <input type="text" inputMode="numeric" placeholder="00:00" {...text('windowStart')} />
          {note('windowStart')}
        </div>
        <div class="field">
          <label for="windowEnd">Window closes (HH:MM)</label>
          <input type="text" inputMode="numeric" placeholder="24:00" {...text('windowEnd')} />
          {note('windowEnd')}
        </div>
      </div>
      <p class="muted">Leave the window empty to send at any time of day; a close before the open crosses midnight.</p>
    </fieldset>
  );
}
