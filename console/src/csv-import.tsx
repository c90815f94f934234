// A CSV file of chats imported into an audience: a header row with a `chatId` column and one
// column per variable. The file is first sent as a dry run, so the operator sees its first rows
// as the API reads them (or the rows it refuses, by line and column) before anything is saved;
// Import then saves it. Importing into a new audience creates the audience at the preview, and
// Cancel deletes it again.
import { useState } from 'preact/hooks';
import { api, ApiError, type Audience, type AudienceMember, type MembersImport } from './api.js';
import { isolated, Outside } from './outside-text.js';

interface Props {
  /** The audience to import into; without it, a new audience is made (its name asked first). */
  audience?: Audience;
  tenantId?: string | undefined;
  /** `id` prefix of the inputs (two imports on one page keep distinct ids). */
  id: string;
  onImported: (audience: Audience, result: MembersImport) => void;
  onCancel?: () => void;
}

export function CsvImport({ audience, tenantId, id, onImported, onCancel }: Props) {
  const [name, setName] = useState('');
  const [target, setTarget] = useState<Audience | null>(audience ?? null);
  const [csv, setCsv] = useState<{ text: string; file: string } | null>(null);
  const [preview, setPreview] = useState<MembersImport | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const created = !audience && target !== null;

  const fail = (err: unknown) =>
    setProblems(
      err instanceof ApiError && err.details.length ? err.details.map((d) => `${d.field}: ${d.message}`) : [err instanceof Error ? err.message : String(err)],
    );

  const choose = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return;
    setPreview(null);
    setProblems([]);
    setNote(null);
    setBusy(true);
    try {
      const text = await file.text();
      setCsv({ text, file: file.name });
      let into = target;
      if (!into) {
        const fallback = file.name.replace(/\.csv$/i, '');
        into = await api.createAudience({ name: name.trim() || fallback, ...(tenantId && { tenantId }) });
        setTarget(into);
        if (!name.trim()) setName(into.name);
      }
      setPreview(await api.importMembers(into.id, text, true));
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  };

  const save = async () => {
    if (!target || !csv) return;
    setBusy(true);
    setProblems([]);
    try {
      const result = await api.importMembers(target.id, csv.text, false);
      const fresh = await api.audience(target.id).catch(() => target);
      setNote(`Imported ${isolated(csv.file)} into ${isolated(fresh.name)}: ${result.added} added, ${result.updated} updated.`);
      setPreview(null);
      setCsv(null);
      onImported(fresh, result);
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  };

  const cancel = async () => {
    // an audience made for this import and never filled goes again
    if (created && target) await api.deleteAudience(target.id).catch(() => undefined);
    setTarget(audience ?? null);
    setPreview(null);
    setProblems([]);
    setCsv(null);
    onCancel?.();
  };

  const columns = preview?.preview ? [...new Set(preview.preview.flatMap((m) => Object.keys(m.vars ?? {})))] : [];
  return (
    <div class="csv-import">
      {!audience && (
        <div class="field">
          <label for={`${id}-name`}>New audience name</label>
          <input id={`${id}-name`} type="text" autoComplete="off" value={name} disabled={created} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
      )}
      <div class="field">
        <label for={`${id}-file`}>CSV file (a chatId column, one column per variable)</label>
        <input id={`${id}-file`} type="file" accept=".csv,text/csv" disabled={busy} onChange={(e) => void choose(e.currentTarget)} />
      </div>
      {busy && <p role="status">Reading…</p>}
      {problems.length > 0 && (
        <div class="error" role="alert">
          <p>Nothing was saved. The file has these problems:</p>
          <ul class="problems">
            {problems.slice(0, 20).map((p) => (
              <li>{p}</li>
            ))}
          </ul>
        </div>
      )}
      {preview && csv && (
        <div class="csv-preview" role="region" aria-label="Import preview">
          <p>
            <Outside>{csv.file}</Outside>: {preview.added} new and {preview.updated} updated chats. The first rows as they will be saved:
          </p>
          <PreviewTable rows={preview.preview ?? []} columns={columns} />
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => void save()}>
              Import {preview.added + preview.updated} chats
            </button>
            <button type="button" disabled={busy} onClick={() => void cancel()}>
              Cancel import
            </button>
          </div>
        </div>
      )}
      {!preview && created && problems.length > 0 && (
        <button type="button" onClick={() => void cancel()}>
          Cancel import
        </button>
      )}
      {note && <p role="status">{note}</p>}
    </div>
  );
}

function PreviewTable({ rows, columns }: { rows: AudienceMember[]; columns: string[] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>chatId</th>
            {columns.map((c) => (
              <th>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr>
              <td class="mono">
                <Outside>{r.chatId}</Outside>
              </td>
              {columns.map((c) => (
                <td>
                  <Outside>{r.vars?.[c] ?? ''}</Outside>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
