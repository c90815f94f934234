// Picks the media part of a campaign: one of the tenant's uploaded files, or a new file uploaded
// on the spot through POST /v1/media (the file is the raw body, its type the Content-Type). A file
// over the API's limit (GET /v1/me) is refused here, before any of it is sent.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Media } from './api.js';
import { FieldNote, invalidProps } from './field.js';

const size = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);
const nameOf = (m: Media) => `${m.filename ?? m.id.slice(0, 8)} (${m.contentType}, ${size(m.size)})`;

/** `id` is the select's id (errors name it); the file input is `<id>-file`; `maxBytes` the API's MEDIA_MAX_BYTES. */
export function MediaPicker({
  id,
  value,
  onChange,
  tenantId,
  maxBytes,
  errors,
}: {
  id: string;
  value: string;
  onChange: (id: string) => void;
  tenantId?: string | undefined;
  maxBytes: number;
  errors?: string[] | undefined;
}) {
  const [media, setMedia] = useState<Media[]>([]);
  const [uploading, setUploading] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    api.media({ limit: 100 }).then(
      (page) => setMedia(page.items),
      () => undefined,
    );
  }, []);
  const upload = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return;
    setNote(null);
    if (file.size > maxBytes) {
      setFailure(`${file.name} is ${size(file.size)}: a file may be at most ${size(maxBytes)}. Choose a smaller one.`);
      input.value = '';
      return;
    }
    setUploading(true);
    setFailure(null);
    try {
      const created = await api.upload(file, file.name, tenantId);
      setMedia((list) => [created, ...list.filter((m) => m.id !== created.id)]);
      onChange(created.id);
      setNote(`Uploaded ${nameOf(created)}.`);
      input.value = '';
    } catch (e) {
      setFailure(e instanceof ApiError ? `${e.message}${e.details.length ? `: ${e.details.map((d) => d.message).join('; ')}` : ''}` : String(e));
    } finally {
      setUploading(false);
    }
  };
  // a media id the list does not hold (older than its first page) still shows as chosen
  const known = value === '' || media.some((m) => m.id === value);
  return (
    <>
      <div class="field">
        <label for={id}>Media</label>
        <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)} {...invalidProps(id, errors)}>
          <option value="">Choose a file</option>
          {!known && <option value={value}>{value}</option>}
          {media.map((m) => (
            <option value={m.id}>{nameOf(m)}</option>
          ))}
        </select>
        <FieldNote id={id} errors={errors} />
      </div>
      <div class="field">
        <label for={`${id}-file`}>Or upload a new file</label>
        <input id={`${id}-file`} type="file" disabled={uploading} aria-describedby={`${id}-file-status`} onChange={(e) => void upload(e.currentTarget)} />
        <span id={`${id}-file-status`} role="status" class={failure ? 'error' : 'muted'}>
          {uploading ? 'Uploading…' : (failure ?? note ?? '')}
        </span>
      </div>
    </>
  );
}
