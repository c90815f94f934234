// "Import a linked session": a WhatsApp device already linked elsewhere (the operator's own
// Baileys script, WAHA, evolution-api) moved in from the files of its useMultiFileAuthState
// folder, or from one JSON bundle {creds, keys}, without linking the phone again.
import { useState } from 'preact/hooks';
import { api, ApiError, type Account, type FieldError, type WhatsAppSession } from '../api.js';
import { ErrorNote } from '../components.js';

/** The bundle the API takes, from the files chosen: the folder's files (creds.json and the key files) or a bundle. */
export async function sessionFromFiles(files: File[]): Promise<WhatsAppSession | string> {
  const read = async (f: File): Promise<unknown> => {
    try {
      return JSON.parse(await f.text());
    } catch {
      throw new Error(`${f.name} is not JSON`);
    }
  };
  try {
    if (files.length === 1 && files[0]!.name !== 'creds.json') {
      const bundle = (await read(files[0]!)) as Partial<WhatsAppSession> | null;
      return bundle && typeof bundle === 'object' && bundle.creds
        ? (bundle as WhatsAppSession)
        : `${files[0]!.name} has no "creds": choose the folder's files, or a bundle {creds, keys}`;
    }
    const creds = files.find((f) => f.name === 'creds.json');
    if (!creds) return 'creds.json is not among the files chosen: choose every file of the session folder';
    const keys: Record<string, unknown> = {};
    for (const f of files) if (f !== creds) keys[f.name.replace(/\.json$/, '')] = await read(f);
    return { creds: (await read(creds)) as WhatsAppSession['creds'], keys };
  } catch (err) {
    return (err as Error).message;
  }
}

export function SessionImport({ account, onImported }: { account: Account; onImported: (a: Account) => void }) {
  const [files, setFiles] = useState<File[]>([]);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [failure, setFailure] = useState<unknown>(null);
  const inputId = `session-${account.id}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    setProblem(null);
    setErrors([]);
    setFailure(null);
    const session = await sessionFromFiles(files);
    if (typeof session === 'string') return setProblem(session);
    setBusy(true);
    try {
      const result = await api.importSession(account.id, session);
      if (result.status === 'active') onImported({ ...account, status: 'active' });
      else setProblem(`WhatsApp did not take the session (${result.reason?.code}): ${result.reason?.message}`);
    } catch (err) {
      if (err instanceof ApiError && err.details.length) setErrors(err.details);
      else setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="fix" onSubmit={(e) => void submit(e)}>
      <p>
        Or import a linked session: a device your own Baileys script (or WAHA, evolution-api) already linked. Stop that program first, then choose every file of
        its session folder (creds.json and the key files), or one JSON bundle {'{creds, keys}'}.
      </p>
      <label for={inputId}>Session files</label>
      <input
        id={inputId}
        type="file"
        accept=".json,application/json"
        multiple
        required
        aria-invalid={problem || errors.length ? 'true' : undefined}
        aria-describedby={problem || errors.length ? `${inputId}-error` : undefined}
        onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])}
      />
      {(problem || errors.length > 0) && (
        <span id={`${inputId}-error`} class="error" role="alert">
          {problem ?? errors.map((d) => `${d.field}: ${d.message}`).join('; ')}
        </span>
      )}
      <button type="submit" class="primary" disabled={busy || files.length === 0}>
        {busy ? 'Importing…' : 'Import a linked session'}
      </button>
      <ErrorNote error={failure} />
    </form>
  );
}
