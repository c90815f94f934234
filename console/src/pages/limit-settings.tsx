// The account settings further limits add (GET /v1/account-defaults `limits`, e.g. the per-chat
// cap): drawn from the API's description of each, so a new limit shows in Add account and in an
// account's Settings without an edit here. Each is an object of whole numbers and choices.
import type { AccountDefaults } from '../api.js';
import { NumberField } from './account-limits.js';
import { FieldNote, invalidProps } from '../field.js';

export type LimitSettings = AccountDefaults['limitSettings'];
/** As typed: setting's field → part → text */
export type LimitValues = Record<string, Record<string, string>>;

/** The values an account has (or none), as the fields show them. */
export function limitValuesOf(settings: LimitSettings, account?: object): LimitValues {
  const stored = (account ?? {}) as Record<string, Record<string, unknown> | null | undefined>;
  return Object.fromEntries(
    settings.map((s) => [s.field, Object.fromEntries(s.parts.map((p) => [p.name, stored[s.field]?.[p.name] == null ? '' : String(stored[s.field]![p.name])]))]),
  );
}

/** The body's fields: a setting all empty is null (off); a number as typed, for the API to judge. */
export function limitBody(settings: LimitSettings, values: LimitValues): Record<string, unknown> {
  return Object.fromEntries(
    settings.map((s) => {
      const v = values[s.field] ?? {};
      if (s.parts.every((p) => (v[p.name] ?? '').trim() === '')) return [s.field, null];
      return [s.field, Object.fromEntries(s.parts.map((p) => [p.name, p.kind === 'int' ? Number((v[p.name] ?? '').trim() || Number.NaN) : v[p.name]]))];
    }),
  );
}

/** The input id of an API field path (`chatCap.count`), or undefined when no setting has it. */
export function limitPlace(settings: LimitSettings, prefix: string, field: string): string | undefined {
  const [name, part] = field.split('.');
  const s = settings.find((x) => x.field === name);
  return s ? `${prefix}-${s.field}-${part ?? s.parts[0]!.name}` : undefined;
}

/** One fieldset per setting: its numbers and its choices. */
export function LimitFields({
  settings,
  prefix,
  values,
  errors,
  onValue,
}: {
  settings: LimitSettings;
  prefix: string;
  values: LimitValues;
  errors: Map<string, string[]>;
  onValue: (field: string, part: string, value: string) => void;
}) {
  return (
    <>
      {settings.map((s) => (
        <fieldset class="subset" key={s.field}>
          <legend>{s.label} (empty: none)</legend>
          <p class="muted">{s.hint}</p>
          <div class="row">
            {s.parts.map((p) => {
              const id = `${prefix}-${s.field}-${p.name}`;
              const value = values[s.field]?.[p.name] ?? '';
              if (p.kind === 'int') {
                return <NumberField key={id} id={id} label={p.label} value={value} onValue={(v) => onValue(s.field, p.name, v)} errors={errors.get(id)} />;
              }
              return (
                <div class="field" key={id}>
                  <label for={id}>{p.label}</label>
                  <select id={id} value={value} onChange={(e) => onValue(s.field, p.name, e.currentTarget.value)} {...invalidProps(id, errors.get(id))}>
                    <option value="">—</option>
                    {(p.values ?? []).map((v) => (
                      <option key={v} value={v}>
                        {v}
                      </option>
                    ))}
                  </select>
                  <FieldNote id={id} errors={errors.get(id)} />
                </div>
              );
            })}
          </div>
        </fieldset>
      ))}
    </>
  );
}
