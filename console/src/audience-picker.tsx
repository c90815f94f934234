// The campaign form's audiences: the tenant's saved lists to send to beside the picked chats
// (each run takes a snapshot of their members when it is made), and a CSV file imported on the
// spot as a new audience, added to the campaign once imported.
import { useEffect, useState } from 'preact/hooks';
import { allPages, api, type Audience } from './api.js';
import { CsvImport } from './csv-import.js';
import { ErrorNote } from './components.js';
import { FieldNote } from './field.js';
import { Outside } from './outside-text.js';

interface Props {
  value: string[];
  onChange: (ids: string[]) => void;
  tenantId?: string | undefined;
  errors?: string[] | undefined;
}

export function AudiencePicker({ value, onChange, tenantId, errors }: Props) {
  const [audiences, setAudiences] = useState<Audience[] | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [importing, setImporting] = useState(false);
  useEffect(() => {
    allPages((cursor) => api.audiences({ limit: 500, cursor })).then(setAudiences, setFailure);
  }, []);
  const toggle = (id: string, on: boolean) => onChange(on ? [...value.filter((v) => v !== id), id] : value.filter((v) => v !== id));
  const shown = (audiences ?? []).filter((a) => !tenantId || a.tenantId === tenantId);
  return (
    <fieldset class="audiences" id="audienceIds" tabIndex={-1} aria-describedby={errors?.length ? 'audienceIds-error' : undefined}>
      <legend>Audiences</legend>
      {audiences && shown.length === 0 && <p class="muted">No audiences yet: import a CSV file below, or make one on the Audiences page.</p>}
      {shown.map((a) => (
        <div class="check">
          <input id={`audience-${a.id}`} type="checkbox" checked={value.includes(a.id)} onChange={(e) => toggle(a.id, e.currentTarget.checked)} />
          <label for={`audience-${a.id}`}>
            <Outside>{a.name}</Outside> ({a.memberCount} {a.memberCount === 1 ? 'chat' : 'chats'})
          </label>
        </div>
      ))}
      <FieldNote id="audienceIds" errors={errors} />
      <ErrorNote error={failure} />
      {importing ? (
        <CsvImport
          id="form-csv"
          tenantId={tenantId}
          onImported={(a) => {
            setAudiences((list) => [a, ...(list ?? []).filter((x) => x.id !== a.id)]);
            onChange([...value.filter((v) => v !== a.id), a.id]);
            setImporting(false);
          }}
          onCancel={() => setImporting(false)}
        />
      ) : (
        <div class="actions">
          <button type="button" onClick={() => setImporting(true)}>
            Import a CSV as a new audience
          </button>
        </div>
      )}
    </fieldset>
  );
}
