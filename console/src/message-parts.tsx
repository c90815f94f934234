// The campaign's message as parts sent in order: text parts and media parts (a file with an
// optional caption), each one added, removed or moved up and down. Every part is a fieldset
// named "Part N", so its inputs read with their place ("Part 2, Caption").
import type { DraftPart } from './campaign-draft.js';
import { newPart } from './campaign-draft.js';
import { FieldNote, invalidProps } from './field.js';
import { MediaPicker } from './media-picker.js';

interface Props {
  parts: DraftPart[];
  onChange: (parts: DraftPart[]) => void;
  errors: Map<string, string[]>;
  tenantId?: string | undefined;
  /** the largest file the API takes (GET /v1/me) */
  mediaMaxBytes: number;
}

export function MessageParts({ parts, onChange, errors, tenantId, mediaMaxBytes }: Props) {
  const update = (i: number, change: Partial<DraftPart>) => onChange(parts.map((p, j) => (j === i ? { ...p, ...change } : p)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...parts];
    [next[i], next[i + by]] = [next[i + by]!, next[i]!];
    onChange(next);
  };
  const remove = (i: number) => onChange(parts.filter((_, j) => j !== i));
  return (
    <fieldset class="parts">
      <legend>Message</legend>
      {parts.length === 0 && <p class="muted">No parts yet: add a text or a media part.</p>}
      <p class="muted" id="parts-hint">
        {'{{name}}'} puts in each chat's own variable (an audience column, or the chat's variables); {'{{name|friends}}'} gives chats without one “friends”
        instead (a fallback holds no |, {'{'} or {'}'}); {'{Hi|Hello}'} picks one of its words per chat.
      </p>
      {parts.map((p, i) => {
        const n = i + 1;
        const id = (what: string) => `part-${i}-${what}`;
        return (
          <fieldset class="part" key={p.key} aria-label={`Part ${n}`} data-part-type={p.type}>
            <legend>
              Part {n}: {p.type === 'text' ? 'text' : 'media'}
            </legend>
            {p.type === 'text' ? (
              <div class="field">
                <label for={id('text')}>Text</label>
                <textarea
                  id={id('text')}
                  rows={4}
                  value={p.text}
                  onInput={(e) => update(i, { text: e.currentTarget.value })}
                  {...invalidProps(id('text'), errors.get(id('text')))}
                />
                <FieldNote id={id('text')} errors={errors.get(id('text'))} />
              </div>
            ) : (
              <>
                <MediaPicker
                  id={id('mediaId')}
                  value={p.mediaId}
                  onChange={(mediaId) => update(i, { mediaId })}
                  tenantId={tenantId}
                  maxBytes={mediaMaxBytes}
                  errors={errors.get(id('mediaId'))}
                />
                <div class="field">
                  <label for={id('caption')}>Caption (optional)</label>
                  <input
                    id={id('caption')}
                    type="text"
                    value={p.caption}
                    onInput={(e) => update(i, { caption: e.currentTarget.value })}
                    {...invalidProps(id('caption'), errors.get(id('caption')))}
                  />
                  <FieldNote id={id('caption')} errors={errors.get(id('caption'))} />
                </div>
              </>
            )}
            <div class="actions part-actions">
              <button type="button" aria-label={`Move part ${n} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                ↑ Up
              </button>
              <button type="button" aria-label={`Move part ${n} down`} disabled={i === parts.length - 1} onClick={() => move(i, 1)}>
                ↓ Down
              </button>
              <button type="button" aria-label={`Remove part ${n}`} onClick={() => remove(i)}>
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
      <div class="actions">
        <button type="button" onClick={() => onChange([...parts, newPart('text')])}>
          Add text part
        </button>
        <button type="button" onClick={() => onChange([...parts, newPart('media')])}>
          Add media part
        </button>
      </div>
    </fieldset>
  );
}
