// Audiences: the tenant's reusable lists of chats (each with its variables), the list of them
// and a new one made empty or from a CSV file. A campaign sends to its audiences beside its own
// chats; each run takes a snapshot of their members when it is made.
import { useEffect, useState } from 'preact/hooks';
import { allPages, api, ApiError, type Audience, type FieldError, type Me, type Tenant } from '../api.js';
import { ErrorNote } from '../components.js';
import { CsvImport } from '../csv-import.js';
import { time } from '../format.js';
import { href } from '../router.js';
import { Outside } from '../outside-text.js';

export function Audiences({ me }: { me: Me }) {
  const [audiences, setAudiences] = useState<Audience[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tenants, setTenants] = useState<Tenant[]>([]);
  const [tenantId, setTenantId] = useState('');
  const reload = () =>
    allPages((cursor) => api.audiences({ limit: 500, cursor })).then(
      (list) => (setAudiences(list), setError(null)),
      (e: unknown) => setError(e),
    );
  useEffect(() => {
    void reload();
    if (me.admin) allPages((cursor) => api.tenants({ limit: 500, cursor })).then(setTenants, setError);
  }, []);
  const added = (a: Audience) => setAudiences((list) => [a, ...(list ?? []).filter((x) => x.id !== a.id)]);
  return (
    <section aria-labelledby="audiences-title">
      <h1 id="audiences-title">Audiences</h1>
      <ErrorNote error={error} />
      {me.admin && (
        <div class="field narrow">
          <label for="aud-tenant">Tenant of a new audience</label>
          <select id="aud-tenant" value={tenantId} onChange={(e) => setTenantId(e.currentTarget.value)}>
            <option value="">Choose a tenant</option>
            {tenants.map((t) => (
              <option value={t.id}>{t.name}</option>
            ))}
          </select>
        </div>
      )}
      <div class="row audience-new">
        <NewAudience tenantId={tenantId || undefined} onCreated={added} />
        <div>
          <h2>From a CSV file</h2>
          <CsvImport id="new-csv" tenantId={tenantId || undefined} onImported={(a) => added(a)} />
        </div>
      </div>
      <h2>Lists</h2>
      {audiences?.length === 0 && <p>No audiences yet.</p>}
      {audiences && audiences.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Audiences">
            <thead>
              <tr>
                <th>Name</th>
                <th>Chats</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {audiences.map((a) => (
                <tr data-audience-id={a.id}>
                  <td>
                    <a href={href.audience(a.id)}>
                      <Outside>{a.name}</Outside>
                    </a>
                  </td>
                  <td>{a.memberCount}</td>
                  <td>{time(a.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** A new, empty audience: its name (errors beside it). */
function NewAudience({ tenantId, onCreated }: { tenantId?: string | undefined; onCreated: (a: Audience) => void }) {
  const [name, setName] = useState('');
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [failure, setFailure] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors([]);
    setFailure(null);
    try {
      onCreated(await api.createAudience({ name, ...(tenantId && { tenantId }) }));
      setName('');
    } catch (err) {
      if (err instanceof ApiError && err.details.length) setErrors(err.details);
      else setFailure(err);
    }
  };
  const nameError = errors.filter((d) => d.field === 'name');
  const other = errors.filter((d) => d.field !== 'name');
  return (
    <form class="new-audience" noValidate onSubmit={(e) => void submit(e)}>
      <h2>New audience</h2>
      <div class="field">
        <label for="audience-name">Name</label>
        <input
          id="audience-name"
          type="text"
          autoComplete="off"
          value={name}
          aria-invalid={nameError.length ? 'true' : undefined}
          aria-describedby={nameError.length ? 'audience-name-error' : undefined}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        {nameError.length > 0 && (
          <span id="audience-name-error" class="error field-error">
            {nameError.map((d) => d.message).join('; ')}
          </span>
        )}
      </div>
      {other.length > 0 && (
        <p class="error" role="alert">
          {other.map((d) => `${d.field}: ${d.message}`).join('; ')}
        </p>
      )}
      <ErrorNote error={failure} />
      <div class="actions">
        <button type="submit" class="primary">
          Create audience
        </button>
      </div>
    </form>
  );
}
