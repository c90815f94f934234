// The fields of an account's sending limits that Add account and an account's Settings share:
// pace, warm-up and the human gap between sends, each with one line saying what it does. The
// numbers a platform starts with come from the API (GET /v1/account-defaults), never a copy.
import type { AccountDefaults } from '../api.js';
import { FieldNote, invalidProps } from '../field.js';

// Empty numbers go as null where null means "none", else as null for the API to name the field.
export const num = (s: string): number | null => (s.trim() === '' ? null : Number(s.trim()));
export const pair = <K extends string>(a: string, b: string, ka: K, kb: K) =>
  a.trim() === '' && b.trim() === '' ? null : ({ [ka]: num(a), [kb]: num(b) } as Record<K, number | null>);

/** The hint's id, then the error's when there is one: a screen reader reads both with the input. */
function described(id: string, hint: string | undefined, errors: string[] | undefined): Record<string, string> {
  const invalid = invalidProps(id, errors);
  const ids = [hint && `${id}-hint`, invalid['aria-describedby']].filter(Boolean).join(' ');
  return { ...invalid, ...(ids && { 'aria-describedby': ids }) };
}

interface NumberProps {
  id: string;
  label: string;
  hint?: string | undefined;
  value: string;
  onValue: (value: string) => void;
  errors: string[] | undefined;
}

/** A whole-number field, its one-line hint under it. */
export function NumberField({ id, label, hint, value, onValue, errors }: NumberProps) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type="number" inputMode="numeric" min={0} value={value} onInput={(e) => onValue(e.currentTarget.value)} {...described(id, hint, errors)} />
      {hint && (
        <span id={`${id}-hint`} class="muted">
          {hint}
        </span>
      )}
      <FieldNote id={id} errors={errors} />
    </div>
  );
}

export const PACE_HINT = 'At most this many sends a minute, whatever else allows.';

/** "20 sends a day at first, then 50 from day 4, …, and no cap from day 31". */
export function warmupWords(steps: AccountDefaults['warmupSteps']): string {
  const sorted = [...steps].sort((a, b) => a.afterDays - b.afterDays);
  return sorted
    .map((s, i) => {
      const cap = s.dailyCap === null ? 'no cap' : i === 0 ? `${s.dailyCap} sends a day` : `${s.dailyCap}`;
      const when = s.afterDays === 0 ? 'at first' : `from day ${s.afterDays}`;
      return `${i === 0 ? '' : i === sorted.length - 1 ? 'and ' : 'then '}${cap} ${when}`;
    })
    .join(', ');
}

/** The warm-up switch; `steps`: the ramp it gives (the account's own, else the API's default), unknown until loaded. */
export function WarmupCheck({
  id,
  checked,
  onChecked,
  errors,
  steps,
}: {
  id: string;
  checked: boolean;
  onChecked: (on: boolean) => void;
  errors: string[] | undefined;
  steps: AccountDefaults['warmupSteps'] | undefined;
}) {
  const hint = `A new number sending at full volume at once gets banned${steps ? `: this allows ${warmupWords(steps)}` : ''}.`;
  return (
    <div class="check-field">
      <div class="check">
        <input id={id} type="checkbox" checked={checked} onChange={(e) => onChecked(e.currentTarget.checked)} {...described(id, hint, errors)} />
        <label for={id}>Warm-up: a daily cap that grows with the account's age</label>
      </div>
      <span id={`${id}-hint`} class="muted">
        {hint}
      </span>
      <FieldNote id={id} errors={errors} />
    </div>
  );
}

/** The human gap, at least and at most: `ids`, `values`, `errors` of the two fields, `onValue` of either. */
export function HumanGap({
  ids,
  values,
  errors,
  onValue,
}: {
  ids: { min: string; max: string };
  values: { min: string; max: string };
  errors: { min: string[] | undefined; max: string[] | undefined };
  onValue: (which: 'min' | 'max', value: string) => void;
}) {
  return (
    <fieldset class="subset">
      <legend>Human gap between sends (seconds; empty: none)</legend>
      <p class="muted">A random wait in this range after each send, on top of the pace, so the account does not send like a machine.</p>
      <div class="row">
        <NumberField id={ids.min} label="Gap at least" value={values.min} onValue={(v) => onValue('min', v)} errors={errors.min} />
        <NumberField id={ids.max} label="Gap at most" value={values.max} onValue={(v) => onValue('max', v)} errors={errors.max} />
      </div>
    </fieldset>
  );
}

const per = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** What the pace and the gap allow together, in sends a minute, from the fields as typed. */
export function inEffect(pace: string, gapMin: string, gapMax: string): string | null {
  const p = num(pace);
  if (p === null || !Number.isFinite(p) || p <= 0) return null;
  const lo = num(gapMin);
  const hi = num(gapMax) ?? lo;
  if (lo === null || hi === null || !Number.isFinite(lo) || !Number.isFinite(hi) || hi <= 0) return `In effect: at most ${p} sends a minute.`;
  const most = lo > 0 ? Math.min(p, 60 / lo) : p;
  const least = Math.min(p, 60 / hi);
  if (most >= p) return `In effect: up to ${p} sends a minute, the gap slowing some.`;
  return `In effect: about ${per(least) === per(most) ? per(most) : `${per(least)}–${per(most)}`} sends a minute: the gap holds the account below its pace.`;
}
